import type { Pool } from 'pg';
import { inChunks } from '../../core/ports/ledger.js';
import { inTransaction } from './transaction.js';

/**
 * Runs a delete of a chunk (`text`, its one parameter `before`) until one deletes less. One relay
 * prunes at a time: each chunk is a transaction under a transaction's lock (a session's, taken
 * through a pooler in transaction mode, stayed held on a pooled server connection); a relay that
 * finds it taken leaves the rest to the one that holds it.
 */
export const pruneInChunks = (pool: Pool, text: string, before: string | number): Promise<number> =>
  inChunks(() =>
    inTransaction(pool, async (c) => {
      if (!(await c.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(hashtextextended('rewardbus:prune', 0)) AS ok`)).rows[0]!.ok) return 0;
      return (await c.query(text, [before])).rowCount ?? 0;
    }),
  );
