import { describe, inject } from 'vitest';
import { openPgStore } from '../../src/relay/index.js';
import { freshDatabase, POSTGRES_HOW } from '../helpers/postgres.js';
import { ledgerContract } from './ledger-contract.js';

const url = inject('postgresUrl');
// Without a server the contract's tests are listed as skipped, each by name (CI=true fails instead: test/global-setup.ts).
describe.skipIf(!url)(url ? 'on PostgreSQL' : `on PostgreSQL (skipped: ${POSTGRES_HOW})`, () => {
  ledgerContract('PostgreSQL', async () => openPgStore(await freshDatabase(url), { owner: 'test-relay', leaseMs: 60_000 }));
});
