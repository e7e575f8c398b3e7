// `rewardbus-relay backup FILE`: a consistent copy of the SQLite ledger while the relay pays.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { stop } from '../helpers/processes.js';
import { relayCommand, startRelayCommand } from '../helpers/relay-command.js';

const dir = mkdtempSync(join(tmpdir(), 'rewardbus-backup-'));
const dataDir = join(dir, 'data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function backup(args: string[], env: Record<string, string> = {}, command = ['backup']) {
  try {
    const r = await promisify(execFile)(process.execPath, relayCommand(...command, ...args), {
      env: { ...process.env, RELAY_DATA_DIR: dataDir, ...env },
      timeout: 20_000,
    });
    return { code: 0, ...r };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('rewardbus-relay backup', () => {
  it('copies the ledger while the relay is paying: the copy has every reward paid before, and passes integrity_check', async () => {
    const catalog = join(dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({ achievements: [{ id: 'coin', title: 'Coin', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }] }));
    const relay = await startRelayCommand({
      RELAY_DATA_DIR: dataDir,
      RELAY_CATALOG: catalog,
      RELAY_RATE_LIMIT_PER_MINUTE: '0',
      RELAY_USER_DAILY_CAP_SATS: '0',
      RELAY_DAILY_BUDGET_SATS: '0',
    });
    try {
      const players = await Promise.all(
        ['ana', 'bo', 'cy', 'di'].map(async (gamertag) => {
          const r = await fetch(`${relay.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag }) });
          return ((await r.json()) as { token: string }).token;
        }),
      );
      const paid: string[] = [];
      let paying = true;
      const load = players.map(async (token) => {
        while (paying) {
          const r = await fetch(`${relay.url}/v1/rewards`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': randomUUID() },
            body: '{"achievementId":"coin"}',
          });
          const body = (await r.json()) as { id: string; status: string };
          if (body.status === 'paid') paid.push(body.id);
        }
      });
      await expect.poll(() => paid.length, { timeout: 10_000 }).toBeGreaterThan(20);
      const paidBefore = [...paid];
      const copy = join(dir, 'ledger-copy.sqlite');
      const r = await backup([copy]);
      const paidDuring = paid.length;
      paying = false;
      await Promise.all(load);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/rewards, integrity ok/);
      // The relay kept paying while the copy was made.
      expect(paidDuring).toBeGreaterThan(paidBefore.length);

      const db = new Database(copy, { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        const inCopy = new Set(db.prepare("SELECT id FROM rewards WHERE state = 'paid'").pluck().all() as string[]);
        for (const id of paidBefore) expect(inCopy.has(id)).toBe(true);
      } finally {
        db.close();
      }

      // An existing file is kept unless --force.
      const before = readFileSync(copy);
      const again = await backup([copy]);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/exists: not overwritten \(--force/);
      expect(readFileSync(copy).equals(before)).toBe(true);
      expect((await backup([copy, '--force'])).code).toBe(0);
    } finally {
      await stop(relay.child);
    }
  });

  it('on PostgreSQL says to use pg_dump instead, and copies nothing', async () => {
    const r = await backup([join(dir, 'pg-copy.sqlite')], { RELAY_DATABASE_URL: 'postgres://rewardbus@db.invalid/rewardbus' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/pg_dump/);
  });

  it('without FILE prints its usage and exits 2', async () => {
    const r = await backup([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Usage: rewardbus-relay backup FILE/);
  });

  it('is not mistaken for start when npm run relay passes it on (start backup FILE): exits 2, starts nothing', async () => {
    const r = await backup(['backup', join(dir, 'x.sqlite')], {}, ['start']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^start takes no arguments \(given: backup .*npm run backup -- FILE/);
  });
});
