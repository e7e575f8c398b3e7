import type { Pool, PoolClient } from 'pg';
import { isStoreOutage } from '../../core/ports/outage.js';

/**
 * How a transaction begins: with the server's bounds on it (a lock waited for in 5 s, a statement
 * in 10 s, a transaction left idle by a frozen relay ended after 30 s), set for this transaction
 * only and in the round trip that begins it. Behind a pooler in transaction mode a session's
 * settings (startup `options`, a SET) stay with a server connection other clients use next, or
 * are refused: only what a transaction sets for itself holds. A statement sent alone, outside a
 * transaction, is bounded by the relay's own answer (PG_BOUNDS.query_timeout), and the functions
 * that wait for locks by their own lock_timeout (store/postgres/migrations/).
 */
export const BEGIN = "BEGIN; SET LOCAL lock_timeout = '5s'; SET LOCAL statement_timeout = '10s'; SET LOCAL idle_in_transaction_session_timeout = '30s'";

/** Serialization failures and deadlocks: the transaction is run again. */
export const RETRYABLE = new Set(['40001', '40P01']);

/**
 * Runs `work` in a transaction on a pooled connection; run again (up to 5 times) when PostgreSQL
 * asks for it. `begin` (BEGIN and the bounds) may carry the transaction's first statements with it
 * (one round trip; no parameters there). A result `{ rollback: r }` is rolled back, and `r` returned.
 */
export async function inTransaction<T>(pool: Pool, work: (c: PoolClient) => Promise<T | { rollback: T }>, begin = BEGIN): Promise<T> {
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
