// Once per test run: a PostgreSQL server for the tests that need one (see test/helpers/postgres.ts).
import type { TestProject } from 'vitest/node';
import { POSTGRES_HOW, startPostgres } from './helpers/postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test server's admin URL; empty when there is none. */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const server = await startPostgres().catch((err: Error) => {
    if (process.env.CI === 'true') throw err;
    console.warn(`Skipping the PostgreSQL tests: the server did not start (${err.message.split('\n')[0]})`);
    return undefined;
  });
  if (!server && process.env.CI === 'true') throw new Error(`CI=true: ${POSTGRES_HOW}`);
  if (!server) console.warn(`Skipping the PostgreSQL tests: ${POSTGRES_HOW}`);
  project.provide('postgresUrl', server?.url ?? '');
  return () => server?.stop();
}
