import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/relay/index.js';
import { eventLogContract } from './event-log-contract.js';

// The event log as the relay runs it: in the store's own thread.
eventLogContract('SQLite', {
  async open() {
    const store = openSqliteStore(join(mkdtempSync(join(tmpdir(), 'rewardbus-events-')), 'ledger.sqlite'));
    await store.opened;
    return store;
  },
});
