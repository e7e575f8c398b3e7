// Where the PostgreSQL server's time goes per statement under the relay's load, from
// pg_stat_statements (the bench's server preloads it): calls, and the mean time planning and
// executing each one (executing includes waits on locks taken inside it).
import pg from 'pg';

/** The server settings that load the extension (and time planning); without them, statementProfile answers nothing. */
export const STATEMENTS_SETTINGS = ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track_planning=on'];

export interface StatementLine {
  statement: string;
  calls: number;
  planMs: number;
  execMs: number;
}

/** Starts counting from zero in this database (creating the extension): call before the load. */
export async function resetStatements(databaseUrl: string): Promise<boolean> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await db.query('SELECT pg_stat_statements_reset()');
    return true;
  } catch {
    return false;
  } finally {
    await db.end();
  }
}

/** The statements that took the most server time since the reset, with their mean times. */
export async function statementProfile(databaseUrl: string, limit = 8): Promise<StatementLine[]> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ statement: string; calls: string; plan_ms: number; exec_ms: number }>(
      `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 60) AS statement, calls, total_plan_time / calls AS plan_ms, total_exec_time / calls AS exec_ms
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND calls > 0
       ORDER BY total_exec_time + total_plan_time DESC LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({ statement: r.statement, calls: Number(r.calls), planMs: r.plan_ms, execMs: r.exec_ms }));
  } catch {
    return [];
  } finally {
    await db.end();
  }
}
