import { describe, inject } from 'vitest';
import { openPgStore, type RelayStore } from '../../src/relay/index.js';
import { freshDatabase, POSTGRES_HOW } from '../helpers/postgres.js';
import { eventLogContract } from './event-log-contract.js';

const url = inject('postgresUrl');
const options = { owner: 'test-relay', leaseMs: 60_000 };
// Which database each store opened here is on, for a second relay's store on the same one.
const databases = new WeakMap<RelayStore, string>();

// Without a server the contract's tests are listed as skipped, each by name (CI=true fails instead: test/global-setup.ts).
describe.skipIf(!url)(url ? 'on PostgreSQL' : `on PostgreSQL (skipped: ${POSTGRES_HOW})`, () => {
  eventLogContract('PostgreSQL', {
    async open() {
      const database = await freshDatabase(url, { migrated: true });
      const store = await openPgStore(database, options);
      databases.set(store, database);
      return store;
    },
    openSibling: (store) => openPgStore(databases.get(store)!, { ...options, owner: 'another-relay' }),
  });
});
