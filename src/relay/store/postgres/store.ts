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
 * How long the relay waits on PostgreSQL before answering 503 (never a hang): a connection in
 * 5 s, a lock in 5 s and a statement in 10 s on the server, and an answer in 12 s on this side,
 * which is what catches a server that is frozen rather than down.
 */
export const PG_BOUNDS = {
  connectionTimeoutMillis: 5_000,
  query_timeout: 12_000,
  keepAlive: true,
  options: '-c statement_timeout=10000 -c lock_timeout=5000 -c idle_in_transaction_session_timeout=30000',
} as const;

/**
 * The shared backend for several relays: PostgreSQL. The schema is migrated at open (versioned,
 * one relay at a time).
 */
export async function openPgStore(connectionString: string, options: PgStoreOptions): Promise<RelayStore> {
  const pool = new pg.Pool({ connectionString, max: options.maxConnections ?? 32, ...PG_BOUNDS });
  // An idle connection the server dropped is replaced by the pool; nothing to crash for.
  pool.on('error', () => undefined);
  try {
    await migrate(pool);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const events = pgEventLog(pool, connectionString);
  return { ledger: pgLedger(pool, { ...options, announce: events.announce }), events, close: () => pool.end() };
}
