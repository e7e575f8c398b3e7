import pg from 'pg';
import type { EventLog } from './event-log.js';
import type { Ledger } from './ledger.js';
import { pgEventLog } from './pg-event-log.js';
import { pgLedger } from './pg-ledger.js';
import { migrate } from './pg-migrations.js';

/**
 * Where a relay keeps what must survive it: the ledger, and the event log (player events, the
 * webhook inbox, ramp sessions). They come together from one backend, so none of them can be
 * left behind in memory while the others are durable.
 */
export interface RelayStore {
  ledger: Ledger;
  events: EventLog;
  close(): Promise<void>;
}

export { openSqliteStore } from './sqlite-store.js';

export interface PgStoreOptions {
  /** This relay's name, as the owner of the payments it is sending. */
  owner: string;
  /** How long a relay's claim on a payment in flight lasts before others may recover it. */
  leaseMs: number;
  /** Connections in this relay's pool. Default 32: a payout holds one for each of its four short transactions. */
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
  return { ledger: pgLedger(pool, options), events: pgEventLog(pool, connectionString), close: () => pool.end() };
}
