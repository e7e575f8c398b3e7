import { describe, inject, it } from 'vitest';
import { openPgStore } from '../../src/relay/index.js';
import { freshDatabase, POSTGRES_HOW } from '../helpers/postgres.js';
import { ledgerContract } from './ledger-contract.js';

const url = inject('postgresUrl');
if (url) {
  ledgerContract('PostgreSQL', async () => {
    const store = await openPgStore(await freshDatabase(url), { owner: 'test-relay', leaseMs: 60_000 });
    // The contract closes the ledger; the store's pool goes with it.
    return { ...store.ledger, close: () => store.close() };
  });
} else {
  describe.skip(`the PostgreSQL ledger (${POSTGRES_HOW})`, () => it('runs against a real server', () => undefined));
}
