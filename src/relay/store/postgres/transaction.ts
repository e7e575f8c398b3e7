import type { Pool, PoolClient } from 'pg';

/** Serialization failures and deadlocks: the transaction is run again. */
const RETRYABLE = new Set(['40001', '40P01']);

/** Runs `work` in a transaction on a pooled connection; run again (up to 5 times) when PostgreSQL asks for it. */
export async function inTransaction<T>(pool: Pool, work: (c: PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      const result = await work(c);
      await c.query('COMMIT');
      return result;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      if (!(attempt < 5 && RETRYABLE.has((err as { code?: string }).code ?? ''))) throw err;
    } finally {
      c.release();
    }
  }
}
