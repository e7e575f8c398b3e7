import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/relay/index.js';
import { ledgerContract } from './ledger-contract.js';

// The ledger as the relay runs it: in the store's own thread.
ledgerContract('SQLite', async () => {
  const store = openSqliteStore(join(mkdtempSync(join(tmpdir(), 'rewardbus-ledger-')), 'ledger.sqlite'));
  await store.opened;
  return store;
});
