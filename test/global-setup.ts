// A PostgreSQL server for the projects that need one (see test/helpers/postgres.ts and
// vitest.config.ts): started by the first of them to run, shared, stopped after the last.
import type { TestProject } from 'vitest/node';
import { POSTGRES_HOW, startPostgres, type TestPostgres } from './helpers/postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test server's admin URL; empty when there is none. */
    postgresUrl: string;
  }
}

// Each project loads this file on its own, so what they share lives on the process.
const SHARED = Symbol.for('rewardbus.test.postgres');
type Shared = { server: Promise<TestPostgres | undefined>; users: number };
const shared = globalThis as typeof globalThis & { [SHARED]?: Shared };

async function start(): Promise<TestPostgres | undefined> {
  const server = await startPostgres().catch((err: Error) => {
    if (process.env.CI === 'true') throw err;
    console.warn(`Skipping the PostgreSQL tests: the server did not start (${err.message.split('\n')[0]})`);
    return undefined;
  });
  if (!server && process.env.CI === 'true') throw new Error(`CI=true: ${POSTGRES_HOW}`);
  if (!server) console.warn(`Skipping the PostgreSQL tests: ${POSTGRES_HOW}`);
  return server;
}

export default async function setup(project: TestProject) {
  const s = (shared[SHARED] ??= { server: start(), users: 0 });
  s.users++;
  const server = await s.server;
  project.provide('postgresUrl', server?.url ?? '');
  return async () => {
    if (--s.users > 0) return;
    delete shared[SHARED];
    await server?.stop();
  };
}
