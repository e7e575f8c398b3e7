// The relay's two ledgers, as a test runs the same scenario on each: SQLite always, PostgreSQL
// where the run has a server (a fresh database each time, and a secret its relays share).
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPgStore, openSqliteStore, type RelayStore } from '../../src/relay/index.js';
import { freshDatabase } from './postgres.js';

export type Backend = { name: string; env: () => Promise<Record<string, string>> };

export const relayBackends = (postgresUrl: string | undefined): Backend[] => [
  { name: 'SQLite', env: async () => ({}) },
  ...(postgresUrl
    ? [{ name: 'PostgreSQL', env: async () => ({ RELAY_DATABASE_URL: await freshDatabase(postgresUrl, { migrated: true }), RELAY_SECRET: `${randomUUID()}${randomUUID()}` }) }]
    : []),
];

/** The two ledgers as stores a test opens itself (a core on them, no relay): a new SQLite file, a fresh PostgreSQL database. */
export const storeBackends = (postgresUrl: string | undefined, prefix: string): Array<[string, () => Promise<RelayStore>]> => [
  [
    'SQLite',
    async () => {
      const s = openSqliteStore(join(mkdtempSync(join(tmpdir(), `rewardbus-${prefix}-`)), 'ledger.sqlite'));
      await s.opened;
      return s;
    },
  ],
  ...(postgresUrl
    ? [['PostgreSQL', async () => openPgStore(await freshDatabase(postgresUrl, { migrated: true }), { owner: 'test', leaseMs: 60_000 })] as [string, () => Promise<RelayStore>]]
    : []),
];
