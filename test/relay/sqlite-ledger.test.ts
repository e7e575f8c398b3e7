import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/relay/index.js';
import { openSqliteDb } from '../../src/relay/store/sqlite/db.js';
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
