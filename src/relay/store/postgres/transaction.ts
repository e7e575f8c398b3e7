import type { Pool, PoolClient } from 'pg';
import { isStoreOutage } from '../outage.js';

/** Serialization failures and deadlocks: the transaction is run again. */
export const RETRYABLE = new Set(['40001', '40P01']);

/**
 * Runs `work` in a transaction on a pooled connection; run again (up to 5 times) when PostgreSQL
 * asks for it. `begin` may carry the transaction's first statements with it (one round trip; no
 * parameters there). A result `{ rollback: r }` is rolled back, and `r` returned.
 */
export async function inTransaction<T>(pool: Pool, work: (c: PoolClient) => Promise<T | { rollback: T }>, begin = 'BEGIN'): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const c = await pool.connect();
    let broken = false;
    try {
      await c.query(begin);
      const result = await work(c);
      if (result && typeof result === 'object' && 'rollback' in result) {
        await c.query('ROLLBACK');
        return result.rollback;
      }
      await c.query('COMMIT');
      return result;
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      // A connection that timed out or dropped is thrown away, not asked to roll back: on a frozen
      // server that would wait out a second timeout. The server rolls back what it never committed.
      broken = isStoreOutage(err) && !RETRYABLE.has(code);
      if (!broken) await c.query('ROLLBACK').catch(() => undefined);
      if (!(attempt < 5 && RETRYABLE.has(code))) throw err;
    } finally {
      c.release(broken);
    }
  }
}
