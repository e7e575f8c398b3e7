// PostgreSQL's own ceiling on this machine, for the relay's figures to be read against: pgbench
// with the shape of a ledger write (an advisory lock and an insert per transaction, fsync on),
// at the bench's 64 clients, for the same number of seconds.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

function pgbenchPath(): string | undefined {
  const root = '/usr/lib/postgresql';
  const bin =
    process.env.POSTGRES_BIN ??
    (existsSync(root)
      ? readdirSync(root)
          .map((v) => join(root, v, 'bin'))
          .find((d) => existsSync(join(d, 'pgbench')))
      : undefined);
  return bin && existsSync(join(bin, 'pgbench')) ? join(bin, 'pgbench') : undefined;
}

/** Transactions per second, or undefined without pgbench. */
export async function pgCeiling(databaseUrl: string, clients: number, seconds: number): Promise<number | undefined> {
  const pgbench = pgbenchPath();
  if (!pgbench) return undefined;
  const { default: pg } = await import('pg');
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  await db.query('CREATE TABLE IF NOT EXISTS bench_ledger (id bigserial PRIMARY KEY, user_id text NOT NULL, sats int NOT NULL, created_at bigint NOT NULL)');
  await db.end();
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-pgbench-'));
  const script = join(dir, 'ledger.sql');
  writeFileSync(
    script,
    [
      '\\set u random(1, 64)',
      'BEGIN;',
      "SELECT pg_advisory_xact_lock(hashtextextended('u:' || :u, 0));",
      "INSERT INTO bench_ledger (user_id, sats, created_at) VALUES ('u' || :u, 1, 0);",
      'END;',
      '',
    ].join('\n'),
  );
  const u = new URL(databaseUrl);
  const { stdout } = await exec(
    pgbench,
    ['-n', '-f', script, '-c', String(clients), '-j', '2', '-T', String(seconds), '-h', u.hostname, '-p', u.port, '-U', decodeURIComponent(u.username), u.pathname.slice(1)],
    {
      env: { ...process.env, PGPASSWORD: decodeURIComponent(u.password) },
    },
  ).finally(() => rmSync(dir, { recursive: true, force: true }));
  const m = /tps = ([\d.]+)/.exec(stdout);
  return m ? Number(m[1]) : undefined;
}
