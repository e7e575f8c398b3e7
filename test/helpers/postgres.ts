// A throwaway PostgreSQL server for the test run: started once (vitest's globalSetup), on a free
// port with its own data directory, as the `postgres` user when we are root (the server refuses
// to run as root), and stopped after.
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';

const exec = promisify(execFile);
export const POSTGRES_HOW = 'PostgreSQL tests need a server: apt-get install -y postgresql (or set POSTGRES_BIN to its bin directory)';

/** Whether this machine can start a PostgreSQL server for the tests. */
export const postgresInstalled = (): boolean => binDir() !== undefined;

/** The directory holding initdb and pg_ctl: POSTGRES_BIN, Debian's, or none. */
function binDir(): string | undefined {
  if (process.env.POSTGRES_BIN) return process.env.POSTGRES_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] && join(root, versions[0], 'bin');
}

export interface TestPostgres {
  /** The admin connection: create a database per test from here. */
  url: string;
  stop(): Promise<void>;
  /** Faults, for the tests of a relay under them: a fast restart, a stop and a start, a freeze (SIGSTOP) and a thaw. */
  restart(): Promise<void>;
  halt(): Promise<void>;
  resume(): Promise<void>;
  freeze(): Promise<void>;
  thaw(): Promise<void>;
}

/** `settings`: server settings beyond the tests' own (`name=value`), e.g. the bench's pg_stat_statements. */
export async function startPostgres(settings: readonly string[] = []): Promise<TestPostgres | undefined> {
  const bin = binDir();
  if (!bin) return undefined;
  const asRoot = userInfo().uid === 0;
  // As root, run the server as Debian's postgres user.
  const run = (cmd: string, args: string[]) => exec(asRoot ? 'runuser' : join(bin, cmd), asRoot ? ['-u', 'postgres', '--', join(bin, cmd), ...args] : args);
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-pg-'));
  if (asRoot) {
    const { stdout } = await exec('id', ['-u', 'postgres']);
    const { stdout: gid } = await exec('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout), Number(gid));
  }
  const port = await freePort();
  await run('initdb', ['-D', join(dir, 'data'), '-U', 'rewardbus', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
  const start = () =>
    run('pg_ctl', [
      '-D',
      join(dir, 'data'),
      '-l',
      join(dir, 'log'),
      '-w',
      '-o',
      `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c max_connections=300${settings.map((x) => ` -c ${x}`).join('')}`,
      'start',
    ]);
  await start();
  /** The postmaster and every backend: what a frozen machine would stop. */
  const processes = async () => {
    const postmaster = Number(readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const { stdout } = await exec('pgrep', ['-P', String(postmaster)]).catch(() => ({ stdout: '' }));
    return [postmaster, ...stdout.split('\n').filter(Boolean).map(Number)];
  };
  const signal = async (sig: NodeJS.Signals) => {
    for (const pid of await processes()) {
      try {
        process.kill(pid, sig);
      } catch {
        // gone meanwhile
      }
    }
  };
  return {
    restart: async () => {
      await run('pg_ctl', ['-D', join(dir, 'data'), '-m', 'fast', '-w', 'stop']);
      await start();
    },
    halt: async () => void (await run('pg_ctl', ['-D', join(dir, 'data'), '-m', 'fast', '-w', 'stop'])),
    resume: async () => void (await start()),
    freeze: () => signal('SIGSTOP'),
    thaw: () => signal('SIGCONT'),
    url: `postgres://rewardbus@127.0.0.1:${port}/postgres`,
    async stop() {
      await run('pg_ctl', ['-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A new, empty database on the test server: each test gets its own. */
/** The database the tests copy: every migration applied (made by test/global-setup.ts, on the tests' server only). */
export const MIGRATED_TEMPLATE = 'rb_migrated';

/**
 * A database of its own on the server: empty, or with `migrated` a copy of MIGRATED_TEMPLATE, so
 * a store opened on it has nothing to migrate (a copy takes ~0.4 s; creating and migrating ~0.7).
 */
export async function freshDatabase(adminUrl: string, { migrated = false } = {}): Promise<string> {
  const { default: pg } = await import('pg');
  const name = `rb_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}${migrated ? ` TEMPLATE ${MIGRATED_TEMPLATE}` : ''}`);
  } finally {
    await admin.end();
  }
  return adminUrl.replace(/\/postgres$/, `/${name}`);
}

/** Makes MIGRATED_TEMPLATE on this server: the relay's migrations, as a store applies them at open. */
export async function makeMigratedTemplate(adminUrl: string): Promise<void> {
  const { default: pg } = await import('pg');
  const { migrate } = await import('../../src/relay/store/postgres/migrations.js');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${MIGRATED_TEMPLATE}`);
  } finally {
    await admin.end();
  }
  const db = new pg.Client({ connectionString: adminUrl.replace(/\/postgres$/, `/${MIGRATED_TEMPLATE}`) });
  await db.connect();
  try {
    await migrate(db);
  } finally {
    await db.end();
  }
}
