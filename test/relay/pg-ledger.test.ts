import { describe, inject, it } from 'vitest';
import { openPgStore } from '../../src/relay/index.js';
import { freshDatabase, POSTGRES_HOW } from '../helpers/postgres.js';
import { ledgerContract } from './ledger-contract.js';

const url = inject('postgresUrl');
if (url) {
  ledgerContract('PostgreSQL', async () => {
    return openPgStore(await freshDatabase(url), { owner: 'test-relay', leaseMs: 60_000 });
  });
} else {
  describe.skip(`the PostgreSQL ledger (${POSTGRES_HOW})`, () => it('runs against a real server', () => undefined));
}
