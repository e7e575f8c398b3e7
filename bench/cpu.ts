// CPU time from /proc: a process's, and one PostgreSQL server's (its postmaster and its live
// processes, and the backends that have ended, which the postmaster has reaped). Only that
// server's: on a shared machine other sessions' servers (tests, benches) run beside it, and
// counting every `postgres` process on the host charged their work to the load under test.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

/**
 * CPU seconds a process (all its threads) has used so far (user + system), from /proc; with
 * `mainThread`, only its main thread's (the one JavaScript runs on: its task id is the pid); with
 * `reaped`, also what its children used before they ended and it waited for them.
 */
export function cpuSeconds(pid: number | undefined, { mainThread = false, reaped = false } = {}): number {
  try {
    const stat = mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`;
    const fields = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    return (reaped ? own + Number(fields[13]) + Number(fields[14]) : own) / 100;
  } catch {
    return 0;
  }
}

/** The server's postmaster pid, from its data directory (the session asking must be a superuser, as the bench's is). */
export async function postmasterPid(databaseUrl: string): Promise<number> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ setting: string }>("SELECT setting FROM pg_settings WHERE name = 'data_directory'");
    return Number(readFileSync(join(rows[0]!.setting, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } finally {
    await db.end();
  }
}

/** CPU seconds so far of the server whose postmaster is `postmaster`: it and its children, live or reaped. */
export function serverSeconds(postmaster: number): number {
  let total = cpuSeconds(postmaster, { reaped: true });
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (Number(stat.split(') ')[1]!.split(' ')[1]) === postmaster) total += cpuSeconds(Number(pid), { reaped: true });
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
