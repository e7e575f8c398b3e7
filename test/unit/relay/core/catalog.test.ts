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
      '  achievements[3] (id "coin-streak"): repeat.kind must be { "kind": "once" | "daily" | "cooldown" | "streak" } (cooldown with "seconds", streak with "sats")',
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

  it("takes a login streak without top-level sats (its steps are repeat.sats; the checked entry says day 1's), and names a bad one", () => {
    const login = { id: 'login', title: 'Daily login', repeat: { kind: 'streak', sats: [10, 20, 30, 50] } };
    expect(loadCatalogFile(file('streak.json', [login])).get('login')).toEqual({ ...login, sats: 10 });
    // Written in code with its first day's sats (as DEFAULT_CATALOG does), or read back from GET /v1/catalog: the same entry.
    expect(createCatalog([{ ...login, sats: 10 } as never]).get('login')).toEqual({ ...login, sats: 10 });
    expect(error(() => createCatalog([{ ...login, sats: 25 }] as never))).toBe(
      'Invalid catalog: achievements[0] (id "login"): sats must be left out of a streak (its amounts are repeat.sats)',
    );
    expect(error(() => createCatalog([{ ...login, repeat: { kind: 'streak', sats: [] } }] as never))).toMatch(/repeat\.sats must hold at least one day/);
    expect(error(() => createCatalog([{ ...login, repeat: { kind: 'streak', sats: [10, 0] } }] as never))).toMatch(/repeat\.sats\.1 must be at least 1/);
    expect(error(() => createCatalog([{ ...login, repeat: { kind: 'streak' } }] as never))).toMatch(/repeat\.sats (is missing|must be a list)/);
    // Any other entry still needs its sats.
    expect(error(() => createCatalog([{ ...coin, sats: undefined }] as never))).toBe(
      'Invalid catalog: achievements[0] (id "first-coin"): the entry has no amount: give "sats" (a whole number) or "usd" (dollars)',
    );
  });

  it("takes amounts in dollars in every list (issue 38): a streak's steps, a tournament's prizes, a referral's rewards; names a bad one", () => {
    const login = { id: 'login', title: 'Daily login', repeat: { kind: 'streak', sats: [{ usd: 0.05 }, 20, { usd: 0.1 }] } };
    // Day 1 in dollars: the checked entry says day 1's usd (its sats are decided at the price).
    expect(createCatalog([login] as never).get('login')).toEqual({ ...login, usd: 0.05 });
    expect(createCatalog([{ ...login, usd: 0.05 }] as never).get('login')).toEqual({ ...login, usd: 0.05 });
    expect(error(() => createCatalog([{ ...login, usd: 0.07 }] as never))).toBe(
      'Invalid catalog: achievements[0] (id "login"): usd must be left out of a streak (its amounts are repeat.sats)',
    );
    expect(error(() => createCatalog([{ ...login, repeat: { kind: 'streak', sats: [{ usd: 0 }] } }] as never))).toMatch(/achievements\[0\] \(id "login"\): repeat\.sats\.0/);
    expect(error(() => createCatalog([{ ...login, repeat: { kind: 'streak', sats: [{ usd: 0.05, sats: 3 }] } }] as never))).toMatch(/repeat\.sats\.0/);
    expect(error(() => createCatalog([{ ...login, repeat: { kind: 'streak', sats: [{ dollars: 1 }] } }] as never))).toMatch(/repeat\.sats\.0/);

    const cup = { id: 'cup', kind: 'tournament', title: 'Cup', prizes: [{ usd: 10 }, 5000] };
    expect(createCatalog([coin, cup] as never).tournaments?.get('cup')).toEqual(cup);
    expect(error(() => createCatalog([coin, { ...cup, prizes: [{ usd: -1 }] }] as never))).toMatch(/achievements\[1\] \(id "cup"\): prizes\.0/);
    expect(error(() => createCatalog([coin, { ...cup, prizes: [{ usd: 0.0000001 }] }] as never))).toMatch(/prizes\.0/);

    const invite = { id: 'invite', kind: 'referral', title: 'Invite', referrerUsd: 0.5, refereeSats: 100, afterPlaySeconds: 0 };
    expect(createCatalog([coin, invite] as never).referrals?.get('invite')).toEqual(invite);
    expect(error(() => createCatalog([coin, { ...invite, referrerSats: 100 }] as never))).toBe(
      'Invalid catalog: achievements[1] (id "invite"): the entry has both "referrerSats" and "referrerUsd": give exactly one of them',
    );
    expect(error(() => createCatalog([coin, { ...invite, refereeSats: undefined }] as never))).toBe(
      'Invalid catalog: achievements[1] (id "invite"): the entry has no referee reward: give "refereeSats" (a whole number) or "refereeUsd" (dollars)',
    );
    expect(error(() => createCatalog([coin, { ...invite, referrerUsd: 0 }] as never))).toBe('Invalid catalog: achievements[1] (id "invite"): referrerUsd must be above 0');
  });

  it('takes the defenses an entry may ask for (play time, a server proof, a hold), and names a bad one', () => {
    const defended = { ...coin, minPlaySeconds: 20, proof: 'server', hold: true };
    expect(createCatalog([defended as never]).get('first-coin')).toEqual(defended);
    expect(error(() => createCatalog([{ ...coin, minPlaySeconds: -1 }] as never))).toBe('Invalid catalog: achievements[0] (id "first-coin"): minPlaySeconds must be at least 0');
    expect(error(() => createCatalog([{ ...coin, proof: 'client' }] as never))).toMatch(/proof must be "server"/);
    expect(error(() => createCatalog([{ ...coin, hold: 'yes' }] as never))).toMatch(/hold must be true or false/);
  });
});
