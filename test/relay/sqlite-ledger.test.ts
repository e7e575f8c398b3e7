import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/relay/index.js';
import type { LedgerRow } from '../../src/relay/store/ledger-row.js';
import { openSqliteDb } from '../../src/relay/store/sqlite/db.js';
import { type RawRow, ROW_COLUMNS, rowOf } from '../../src/relay/store/sqlite/reward-rows.js';
import { rowUpdater, type Value } from '../../src/relay/store/sqlite/row-update.js';
import { balanceLedgerContract } from './balance-ledger-contract.js';
import { ledgerContract } from './ledger-contract.js';
import { streakContract } from './ledger-streak-contract.js';
import { referralStoreContract } from './referral-store-contract.js';

// The ledger as the relay runs it: in the store's own thread.
async function openStore() {
  const store = openSqliteStore(join(mkdtempSync(join(tmpdir(), 'rewardbus-ledger-')), 'ledger.sqlite'));
  await store.opened;
  return store;
}
ledgerContract('SQLite', openStore);
streakContract('SQLite', openStore);
balanceLedgerContract('SQLite', openStore);
referralStoreContract('SQLite', openStore);

// The group commit shares one transaction among the writes of a turn: one that throws must undo
// only itself, whatever the others in its commit wrote.
describe('SQLite group commit', () => {
  it('undoes only the write that threw; the others in its commit are kept', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'rewardbus-commit-')), 'ledger.sqlite');
    const sqlite = openSqliteDb(file);
    const insert = sqlite.db.prepare('INSERT INTO reserved (scope, day, sats) VALUES (?, ?, ?)');
    const writes = [
      sqlite.write(() => insert.run('first', 'd', 1).changes),
      sqlite.write(() => {
        insert.run('second', 'd', 2);
        throw new Error('this write fails after writing');
      }),
      // A constraint the database itself refuses: the first write's key again.
      sqlite.write(() => insert.run('first', 'd', 3).changes),
      sqlite.write(() => insert.run('fourth', 'd', 4).changes),
    ];
    const settled = await Promise.allSettled(writes);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    await sqlite.close();
    // What was committed, read back from the file by a new connection.
    const again = openSqliteDb(file);
    expect(again.db.prepare('SELECT scope, sats FROM reserved ORDER BY scope').all()).toEqual([
      { scope: 'first', sats: 1 },
      { scope: 'fourth', sats: 4 },
    ]);
    await again.close();
  });
});

// A transition's UPDATE names only the columns that changed (store/sqlite/row-update.ts): whatever
// two rows differ in, the row read back is the row the primitive built, column for column.
describe('SQLite row update', () => {
  it('writes every column a transition changed, and the row read back is the one built', async () => {
    const sqlite = openSqliteDb(join(mkdtempSync(join(tmpdir(), 'rewardbus-update-')), 'ledger.sqlite'));
    const { db } = sqlite;
    const update = rowUpdater((set) => db.prepare<Value[]>(`UPDATE rewards SET ${set} WHERE id = ?`));
    const byId = db.prepare<[string], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE id = ?`).raw();
    const insert = db.prepare(
      `INSERT INTO rewards (id, user_id, idempotency_key, request_hash, achievement_id, sats, state, phase, reason, payment_id, gamertag, occurred_at, address, day, created_at, settled_at, kind, terms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const T = Date.parse('2026-11-25T12:00:00Z');
    const nullable = <V>(a: fc.Arbitrary<V>) => fc.option(a, { nil: null });
    // What a transition may set each column to (times as PostgreSQL hands them too: strings).
    const row = fc.record({
      user_id: fc.constantFrom('u-1', 'guest_1'),
      sats: fc.integer({ min: 0, max: 100 }),
      state: fc.constantFrom('deferred', 'sending', 'credited', 'paid', 'rejected', 'held', 'failed', 'needs_review') as fc.Arbitrary<LedgerRow['state']>,
      phase: fc.constantFrom('claimed', 'sent') as fc.Arbitrary<LedgerRow['phase']>,
      reason: nullable(fc.constantFrom('cooldown', 'denied_by_operator')),
      payment_id: nullable(fc.constantFrom('p-1', 'p-2')),
      gamertag: nullable(fc.constantFrom('ada', 'bob')),
      address: nullable(fc.constantFrom('203.0.113.1', '198.51.100.2')),
      day: fc.constantFrom('2026-11-24', '2026-11-25'),
      created_at: fc.oneof(fc.constantFrom(T, T + 1), fc.constantFrom(String(T), String(T + 1))),
      settled_at: nullable(fc.oneof(fc.constantFrom(T, T + 5), fc.constant(String(T + 5)))),
      kind: fc.constantFrom('payout', 'credit', 'withdrawal') as fc.Arbitrary<LedgerRow['kind']>,
      terms: nullable(fc.constantFrom({ usd: 0.02 }, { usd: 0.02, streakDay: 2 }, { btcUsd: 90_000, usd: 0.05 })),
    });
    let n = 0;
    fc.assert(
      fc.property(row, row, (b, a) => {
        const id = `r-${n++}`;
        const fixed = { id, idempotency_key: id, request_hash: 'h', achievement_id: 'coin', occurred_at: null };
        const before: LedgerRow = { ...fixed, ...b };
        const after: LedgerRow = { ...fixed, ...a };
        insert.run(
          id,
          before.user_id,
          id,
          'h',
          'coin',
          before.sats,
          before.state,
          before.phase,
          before.reason,
          before.payment_id,
          before.gamertag,
          null,
          before.address,
          before.day,
          Number(before.created_at),
          before.settled_at === null ? null : Number(before.settled_at),
          before.kind,
          before.terms === null ? null : JSON.stringify(before.terms),
        );
        // As the primitive finds it: read back from the file.
        update(rowOf(byId.get(id)!), after);
        expect(rowOf(byId.get(id)!)).toEqual({ ...after, created_at: Number(after.created_at), settled_at: after.settled_at === null ? null : Number(after.settled_at) });
      }),
      { numRuns: 500 },
    );
    await sqlite.close();
  });
});

// The relay and the operator's commands (`review`, `tournament`) each open the ledger file, each
// migrating it: starting together on a new file, or on one a new version migrates, none may fail.
describe('SQLite migrations', () => {
  it('migrate a file that three stores open at once, each opening it whole', async () => {
    for (let round = 0; round < 8; round++) {
      const file = join(mkdtempSync(join(tmpdir(), 'rewardbus-migrate-')), 'ledger.sqlite');
      const stores = [openSqliteStore(file), openSqliteStore(file), openSqliteStore(file)];
      const opened = await Promise.allSettled(stores.map((s) => s.opened));
      await Promise.all(stores.map((s) => s.close().catch(() => undefined)));
      expect([round, opened.map((o) => (o.status === 'fulfilled' ? 'open' : String((o.reason as Error).message ?? JSON.stringify(o.reason))))]).toEqual([
        round,
        ['open', 'open', 'open'],
      ]);
    }
  });

  // Found by the full test, one run in twenty: the switch of a new file to WAL came before the busy
  // timeout was set, so a store opening while another held the file's lock failed at once.
  it('waits for a file another process holds locked as it opens, rather than failing', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'rewardbus-migrate-')), 'ledger.sqlite');
    const other = new Database(file);
    // Another store's first write on the file, under way: it holds the lock a write takes.
    other.exec('BEGIN IMMEDIATE');
    other.exec('CREATE TABLE another_store_s (x)');
    const store = openSqliteStore(file);
    // The store opens on its own thread: this one lets the lock go a moment later.
    await new Promise((resolve) => setTimeout(resolve, 300));
    other.exec('COMMIT');
    other.close();
    await expect(store.opened.then(() => 'open')).resolves.toBe('open');
    await store.close();
  });
});
