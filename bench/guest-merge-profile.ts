// Where a PostgreSQL guest merge of 1,000 credits spends its time (issue 39, aim 3): the merge's
// own transaction timed on the client, and each statement inside the server from
// pg_stat_statements (nested ones too: rewardbus_apply's, with their buffers and WAL). Run alone:
//   node --import tsx bench/guest-merge-profile.ts [runs]
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { openPgStore } from '../src/relay/index.js';
import { freshDatabase, startPostgres } from '../test/helpers/postgres.js';
import { CREDITS, creditedGuest, RULES } from './guest-merge.js';
import { resetStatements, STATEMENTS_SETTINGS } from './pg-statements.js';

const RUNS = Number(process.argv[2] ?? 3);

interface Line {
  statement: string;
  calls: string;
  exec_ms: number;
  hit: string;
  dirtied: string;
  wal_records: string;
  wal_kb: number;
}

/** The server's statements since the reset, nested ones included, by time. */
async function lines(url: string): Promise<Line[]> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<Line>(
      `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS statement, calls, round(total_exec_time::numeric, 1)::float AS exec_ms, shared_blks_hit AS hit,
         shared_blks_dirtied AS dirtied, wal_records, round(wal_bytes / 1024, 0)::float AS wal_kb
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'
       ORDER BY total_exec_time DESC LIMIT 10`,
    );
    return rows;
  } finally {
    await db.end();
  }
}

const server = await startPostgres([...STATEMENTS_SETTINGS, 'pg_stat_statements.track=all']);
if (!server) throw new Error('no PostgreSQL server on this machine');
try {
  for (let run = 0; run < RUNS; run++) {
    const url = await freshDatabase(server.url);
    const store = await openPgStore(url, { owner: 'bench', leaseMs: 60_000 });
    try {
      const { ledger } = store;
      const { guest, t0 } = await creditedGuest(ledger);
      await resetStatements(url);
      const start = performance.now();
      const merged = await ledger.mergeGuest!(guest, `player-${randomUUID()}`, RULES, { actor: 'bench', action: 'merge' }, t0 + CREDITS + 1);
      const ms = performance.now() - start;
      console.log(`run ${run + 1}: merged ${merged.moved.length} credits in ${ms.toFixed(0)} ms (client); inside the server:`);
      console.table(await lines(url));
    } finally {
      await store.close();
    }
  }
} finally {
  await server.stop();
}
