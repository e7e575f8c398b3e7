// The relay's two ledgers, as a test runs the same scenario on each: SQLite always, PostgreSQL
// where the run has a server (a fresh database each time, and a secret its relays share).
import { randomUUID } from 'node:crypto';
import { freshDatabase } from './postgres.js';

export type Backend = { name: string; env: () => Promise<Record<string, string>> };

export const relayBackends = (postgresUrl: string | undefined): Backend[] => [
  { name: 'SQLite', env: async () => ({}) },
  ...(postgresUrl
    ? [{ name: 'PostgreSQL', env: async () => ({ RELAY_DATABASE_URL: await freshDatabase(postgresUrl, { migrated: true }), RELAY_SECRET: `${randomUUID()}${randomUUID()}` }) }]
    : []),
];
