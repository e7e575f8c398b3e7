// Debian's PgBouncer in front of the tests' PostgreSQL, as a studio's hosted database has it:
// stock settings but for what one must set (the listen port, client authentication, the pool
// mode and the database line). In the foreground, as the `postgres` user when we are root (it
// refuses to run as root), its files in a temp dir of its own.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';

const exec = promisify(execFile);
export const PGBOUNCER_HOW = 'the pooler tests need PgBouncer: apt-get install -y pgbouncer (or set PGBOUNCER_BIN)';

/** PGBOUNCER_BIN, when set, is the only one tried. */
export const PGBOUNCER = (process.env.PGBOUNCER_BIN ? [process.env.PGBOUNCER_BIN] : ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer']).find((p) =>
  existsSync(p),
);

export interface TestPgBouncer {
  /** A database of the tests' server (its direct URL) as reached through the pooler, with the password the pooler asks for. */
  through(databaseUrl: string): string;
  /** The password in `url`, so a test can check an error never says it. */
  password: string;
  /** What PgBouncer logged (its log goes to stderr). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * PgBouncer in `mode` in front of the tests' server (`serverUrl`: trust authentication there, as
 * the tests' server has it; the pooler asks clients for a password). Its database line is the
 * fallback one (`*`), so each test's fresh database is reached through it.
 */
export async function startPgBouncer(serverUrl: string, mode: 'transaction' | 'session' = 'transaction'): Promise<TestPgBouncer> {
  if (!PGBOUNCER) throw new Error(PGBOUNCER_HOW);
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username);
  const password = `pooler-${Math.random().toString(36).slice(2, 12)}`;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-pgbouncer-'));
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" "${password}"\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    `[databases]
* = host=${server.hostname} port=${server.port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = scram-sha-256
auth_file = ${join(dir, 'userlist.txt')}
pool_mode = ${mode}
`,
  );
  // As root, run it as Debian's postgres user: its files are made theirs.
  const asRoot = userInfo().uid === 0;
  let ids = {};
  if (asRoot) {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([exec('id', ['-u', 'postgres']), exec('id', ['-g', 'postgres'])]);
    ids = { uid: Number(uid), gid: Number(gid) };
    for (const f of ['', 'userlist.txt', 'pgbouncer.ini']) chownSync(join(dir, f), Number(uid), Number(gid));
  }
  const child: ChildProcess = spawn(PGBOUNCER, [join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'], ...ids });
  let log = '';
  for (const s of [child.stdout!, child.stderr!]) s.on('data', (d: Buffer) => void (log += d.toString()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // Until it accepts connections.
  for (const deadline = Date.now() + 10_000; !(await accepts(port)); await new Promise((r) => setTimeout(r, 50))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`pgbouncer did not start: ${log}`);
    }
  }
  return {
    through: (databaseUrl) => `postgres://${encodeURIComponent(user)}:${password}@127.0.0.1:${port}${new URL(databaseUrl).pathname}`,
    password,
    log: () => log,
    stop,
  };
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => {
      s.end();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
