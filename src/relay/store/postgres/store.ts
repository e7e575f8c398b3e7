import pg from 'pg';
import type { RelayStore } from '../relay-store.js';
import { pgEventLog } from './event-log.js';
import { pgLedger } from './ledger.js';
import { migrate } from './migrations.js';

export interface PgStoreOptions {
  /** This relay's name, as the owner of the payments it is sending. */
  owner: string;
  /** How long a relay's claim on a payment in flight lasts before others may recover it. */
  leaseMs: number;
  /** Connections in this relay's pool. Default 32: a payout holds one for each of its short transactions. */
  maxConnections?: number;
}

/**
 * The shared backend for several relays: PostgreSQL. The schema is migrated at open (versioned,
 * one relay at a time).
 */
export async function openPgStore(connectionString: string, options: PgStoreOptions): Promise<RelayStore> {
  const pool = new pg.Pool({ connectionString, max: options.maxConnections ?? 32 });
  // An idle connection the server dropped is replaced by the pool; nothing to crash for.
  pool.on('error', () => undefined);
  try {
    await migrate(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const events = pgEventLog(pool, connectionString);
  return { ledger: pgLedger(pool, { ...options, announce: events.announce }), events, ping: () => pingPool(pool), close: () => pool.end() };
}

/** Readiness: `SELECT 1` through the pool, given up after `timeoutMs` (a pool with no free connection counts as not answering). */
export async function pingPool(pool: pg.Pool, timeoutMs = 2_000): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([pool.query('SELECT 1'), late]);
  } finally {
    clearTimeout(timer);
  }
}
