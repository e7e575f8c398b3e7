// Where a PostgreSQL relay's time goes, seen from the database: pg_stat_activity sampled during
// the load. Each sample of each relay connection is one of: running a statement (CPU or disk),
// waiting on a lock (the player's advisory lock, the budget row), waiting on the WAL (a commit's
// flush), or idle in a transaction (waiting for the relay's next statement: a round trip).

export interface ActivityProfile {
  samples: number;
  /** Shares of the connection samples, by what each was doing. */
  shares: Record<string, number>;
  /** The statements seen most (each connection's current or last one), by share of samples. */
  statements: Record<string, number>;
}

/** `applicationName`: only the connections of the process started with that PGAPPNAME. */
export function sampleActivity(databaseUrl: string, everyMs = 20, applicationName?: string): { stop(): Promise<ActivityProfile> } {
  const counts = new Map<string, number>();
  const statements = new Map<string, number>();
  let samples = 0;
  let running = true;
  const loop = (async () => {
    const { default: pg } = await import('pg');
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const name = new URL(databaseUrl).pathname.slice(1);
    while (running) {
      const { rows } = await db.query<{ state: string | null; wait_event_type: string | null; wait_event: string | null; query: string | null }>(
        "SELECT state, wait_event_type, wait_event, left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS query " +
          'FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = $2 AND ($3::text IS NULL OR application_name = $3)',
        [name, 'client backend', applicationName ?? null],
      );
      samples++;
      for (const r of rows) {
        const what =
          r.state === 'idle in transaction'
            ? 'idle in transaction (a round trip to the relay)'
            : r.state === 'active'
              ? r.wait_event_type === 'Lock'
                ? `waiting on a lock (${r.wait_event})`
                : r.wait_event_type === 'IO' || r.wait_event_type === 'LWLock'
                  ? `waiting on ${r.wait_event_type} (${r.wait_event})`
                  : r.wait_event_type === 'Client'
                    ? 'active, reading from the relay'
                    : 'running a statement (CPU)'
              : 'idle (between transactions)';
        counts.set(what, (counts.get(what) ?? 0) + 1);
        if (r.query) statements.set(r.query, (statements.get(r.query) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
    await db.end();
  })();
  return {
    async stop() {
      running = false;
      await loop.catch(() => undefined);
      const total = [...counts.values()].reduce((s, n) => s + n, 0) || 1;
      const top = [...statements].sort((a, b) => b[1] - a[1]).slice(0, 6);
      return {
        samples,
        shares: Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).map(([k, n]) => [k, n / total])),
        statements: Object.fromEntries(top.map(([k, n]) => [k, n / total])),
      };
    },
  };
}
