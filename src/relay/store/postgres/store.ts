import { createHmac } from 'node:crypto';
import pg, { type Pool } from 'pg';
import type { RelayStore } from '../../core/ports/relay-store.js';
import { pgEventLog, type StoreLog } from './event-log.js';
import { pgLedger } from './ledger.js';
import { migrate } from './migrations.js';
import { pgReferrals } from './referrals.js';
import { inTransaction } from './transaction.js';

export interface PgStoreOptions {
  /** This relay's name, as the owner of the payments it is sending. */
  owner: string;
  /** How long a relay's claim on a payment in flight lasts before others may recover it. */
  leaseMs: number;
  /** Connections in this relay's pool. Default 32: a payout holds one for each of its short transactions. */
  maxConnections?: number;
  /** Where the listener says it lost its connection and came back. */
  logger?: StoreLog;
  /**
   * The secrets this relay signs and verifies player tokens with (RELAY_SECRET's list). Every relay
   * on the database must share one: a relay whose list shares none with the last one started
   * refuses to start (SecretMismatchError), rather than refuse the others' tokens in silence.
   */
  secrets?: readonly string[];
  /**
   * The connection for the work that needs a session of its own: LISTEN (other relays' events)
   * and the migrations. Direct to PostgreSQL, or through a pooler in session mode: a transaction
   * pooler drops notifications. Default: `connectionString`, which may then go through a pooler
   * only in session mode (RELAY_DATABASE_LISTEN_URL).
   */
  listenUrl?: string;
}

/**
 * How long the relay waits on PostgreSQL before answering 503 (never a hang): a connection from
 * the pool (or a new one) in 10 s, a lock in 5 s and a statement in 10 s on the server, and an
 * answer in 12 s on this side, which is what catches a server that is frozen rather than down.
 * The server's bounds are set by each transaction (transaction.ts BEGIN) and on the functions
 * that wait for locks, never for the session (startup `options`): a pooler refuses those, or,
 * told to ignore them, leaves no bound at all.
 */
export const PG_BOUNDS = {
  connectionTimeoutMillis: 10_000,
  query_timeout: 12_000,
  keepAlive: true,
} as const;

/** The listen connection (PgStoreOptions.listenUrl) could not be opened at start. */
export class ListenConnectionError extends Error {
  constructor(cause: unknown) {
    super((cause as Error)?.message ?? String(cause), { cause });
  }
}

/**
 * The shared backend for several relays: PostgreSQL. The schema is migrated at open (versioned,
 * one relay at a time), on the listen connection; everything else goes through the pool, one
 * transaction at a time and no session state between them, so `connectionString` may go through
 * a pooler in transaction mode (PgBouncer's usual default).
 */
export async function openPgStore(connectionString: string, options: PgStoreOptions): Promise<RelayStore> {
  const listenUrl = options.listenUrl ?? connectionString;
  await migrateOn(listenUrl);
  const pool = new pg.Pool({ connectionString, max: options.maxConnections ?? 32, ...PG_BOUNDS });
  // A connection the server dropped (a restart, an administrator) is replaced by the pool: idle
  // ones report here, and checked-out ones to their own listener, set once per connection; the
  // query in flight fails on its own, and becomes a 503.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  try {
    // The pool's own connection is tried at start too: a refusal is told now, naming its URL.
    if (options.secrets) await agreeOnSecrets(pool, options.secrets);
    else await pool.query('SELECT 1');
  } catch (err) {
    await pool.end();
    throw err;
  }
  const events = pgEventLog(pool, listenUrl, options.logger);
  // One connection for each kind of grouped write (store/postgres/group.ts), one group of each under way at a time.
  const groups = new pg.Pool({ connectionString, max: 2, ...PG_BOUNDS });
  groups.on('error', () => undefined);
  groups.on('connect', (client) => client.on('error', () => undefined));
  return {
    ledger: pgLedger(pool, { ...options, announce: events.announce, groups }),
    events,
    referrals: pgReferrals(pool),
    ping: () => pingPool(pool),
    close: async () => {
      await Promise.all([pool.end(), groups.end()]);
    },
  };
}

/** The schema migrated on a connection of its own to `listenUrl`, closed after. */
async function migrateOn(listenUrl: string) {
  const client = new pg.Client({ connectionString: listenUrl, connectionTimeoutMillis: PG_BOUNDS.connectionTimeoutMillis, keepAlive: true });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw new ListenConnectionError(err);
  }
  try {
    await migrate(client);
  } finally {
    await client.end().catch(() => undefined);
  }
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

/** Two relays on one database that sign player tokens with different secrets. */
export class SecretMismatchError extends Error {
  constructor() {
    super(
      'RELAY_SECRET shares no secret with the relays already on this database: each would refuse the tokens the other signs. Give every relay the same RELAY_SECRET ' +
        '(to rotate: OLD,NEW on all of them first, then NEW,OLD on all, then NEW once the old tokens have expired: docs/deploy.md §7).',
    );
  }
}

/** A secret's fingerprint: says whether two relays share it, and nothing about the secret. */
const fingerprint = (secret: string) => createHmac('sha256', secret).update('rewardbus relay secret fingerprint').digest('base64url').slice(0, 22);

/**
 * The relays on a database must verify each other's tokens: this relay's secrets must share at
 * least one with those recorded by the last relay that started (a rotation overlaps: NEW,OLD).
 * Then its own are recorded, so a secret every relay has dropped stops counting.
 */
async function agreeOnSecrets(pool: Pool, secrets: readonly string[]) {
  const mine = secrets.map(fingerprint);
  await inTransaction(pool, async (c) => {
    await c.query('LOCK TABLE relay_secrets IN EXCLUSIVE MODE');
    const known = (await c.query<{ fingerprint: string }>('SELECT fingerprint FROM relay_secrets')).rows.map((r) => r.fingerprint);
    if (known.length && !known.some((f) => mine.includes(f))) throw new SecretMismatchError();
    await c.query('DELETE FROM relay_secrets');
    await c.query('INSERT INTO relay_secrets (fingerprint, seen_at) SELECT unnest($1::text[]), $2', [mine, Date.now()]);
  });
}
