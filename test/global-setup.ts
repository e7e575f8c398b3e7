// A PostgreSQL server and the relay built once (test/relay-build.ts), for the projects that need
// them (see test/helpers/postgres.ts and vitest.config.ts): made by the first of them to run,
// shared, taken down after the last.
import { rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { makeMigratedTemplate, POSTGRES_HOW, startPostgres, type TestPostgres } from './helpers/postgres.js';
import { buildRelayForTests } from './relay-build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test server's admin URL; empty when there is none. */
    postgresUrl: string;
    /** The relay's package built for this run (test/relay-build.ts): its dist folder. */
    relayBuild: string;
  }
}

// Each project loads this file on its own, so what they share lives on the process.
const SHARED = Symbol.for('rewardbus.test.postgres');
type Shared = { server: Promise<TestPostgres | undefined>; relay: Promise<string>; users: number };
const shared = globalThis as typeof globalThis & { [SHARED]?: Shared };

async function start(): Promise<TestPostgres | undefined> {
  const server = await startPostgres().catch((err: Error) => {
    if (process.env.CI === 'true') throw err;
    console.warn(`Skipping the PostgreSQL tests: the server did not start (${err.message.split('\n')[0]})`);
    return undefined;
  });
  if (!server && process.env.CI === 'true') throw new Error(`CI=true: ${POSTGRES_HOW}`);
  if (!server) console.warn(`Skipping the PostgreSQL tests: ${POSTGRES_HOW}`);
  // The database most tests copy rather than migrate afresh (freshDatabase's `migrated`).
  if (server) await makeMigratedTemplate(server.url);
  return server;
}

export default async function setup(project: TestProject) {
  const s = (shared[SHARED] ??= { server: start(), relay: buildRelayForTests(), users: 0 });
  s.users++;
  const [server, relay] = await Promise.all([s.server, s.relay]);
  project.provide('postgresUrl', server?.url ?? '');
  project.provide('relayBuild', relay);
  return async () => {
    if (--s.users > 0) return;
    delete shared[SHARED];
    rmSync(relay, { recursive: true, force: true });
    await server?.stop();
  };
}
