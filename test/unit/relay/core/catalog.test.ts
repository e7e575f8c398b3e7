import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCatalog, loadCatalogFile } from '../../../../src/relay/core/catalog.js';

const dir = mkdtempSync(join(tmpdir(), 'rewardbus-catalog-'));
const file = (name: string, json: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(json));
  return path;
};
const coin = { id: 'first-coin', title: 'First coin', sats: 21, repeat: { kind: 'once' } };
const streak = { id: 'coin-streak', title: 'Streak', sats: 5, repeat: { kind: 'cooldown', seconds: 30 } };
const error = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('no error');
};

describe('the catalog file (RELAY_CATALOG)', () => {
  it('is a bare array or { "achievements": [...] }', () => {
    expect([...loadCatalogFile(file('bare.json', [coin, streak])).keys()]).toEqual(['first-coin', 'coin-streak']);
    expect([...loadCatalogFile(file('wrapped.json', { achievements: [coin, streak] })).keys()]).toEqual(['first-coin', 'coin-streak']);
  });

  it('names the setting, the entry (index and id) and the field of each mistake', () => {
    const path = file('bad.json', [coin, { ...streak, sats: 0 }, { title: 'No id', sats: 1, repeat: { kind: 'daily' } }, { ...streak, repeat: { kind: 'weekly' } }]);
    expect(error(() => loadCatalogFile(path)).split('\n')).toEqual([
      `RELAY_CATALOG: ${path} is not a catalog:`,
      '  achievements[1] (id "coin-streak"): sats must be at least 1',
      '  achievements[2]: id is missing (it must be a string)',
      '  achievements[3] (id "coin-streak"): repeat.kind must be { "kind": "once" | "daily" | "cooldown" } (cooldown with "seconds")',
    ]);
  });

  it('names a repeated id with both entries, an empty list, an object without achievements, bad JSON', () => {
    expect(error(() => loadCatalogFile(file('dup.json', [coin, streak, { ...coin, title: 'Again' }])))).toContain(
      'achievements[2] (id "first-coin"): id is already used by achievements[0]',
    );
    expect(error(() => loadCatalogFile(file('empty.json', [])))).toContain('the list must hold at least one achievement');
    expect(error(() => loadCatalogFile(file('other.json', { items: [coin] })))).toMatch(
      /^RELAY_CATALOG: .* is not a catalog: it must be a list of achievements, or \{ "achievements": \[\.\.\.\] \}$/,
    );
    writeFileSync(join(dir, 'broken.json'), '[{ "id": ');
    expect(error(() => loadCatalogFile(join(dir, 'broken.json')))).toMatch(/^RELAY_CATALOG: .*broken\.json is not valid JSON/);
  });

  it('in code, createCatalog says the same', () => {
    expect(error(() => createCatalog([coin, { ...coin, sats: 1.5 }] as never))).toBe('Invalid catalog: achievements[1] (id "first-coin"): sats must be a whole number');
  });

  it('takes the defenses an entry may ask for (play time, a server proof, a hold), and names a bad one', () => {
    const defended = { ...coin, minPlaySeconds: 20, proof: 'server', hold: true };
    expect(createCatalog([defended as never]).get('first-coin')).toEqual(defended);
    expect(error(() => createCatalog([{ ...coin, minPlaySeconds: -1 }] as never))).toBe('Invalid catalog: achievements[0] (id "first-coin"): minPlaySeconds must be at least 0');
    expect(error(() => createCatalog([{ ...coin, proof: 'client' }] as never))).toMatch(/proof must be "server"/);
    expect(error(() => createCatalog([{ ...coin, hold: 'yes' }] as never))).toMatch(/hold must be true or false/);
  });
});
