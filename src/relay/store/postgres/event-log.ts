import { randomBytes } from 'node:crypto';
import pg, { type Pool, type PoolClient } from 'pg';
import { type EventLog, type PlayerEvent, refuseRewardEvent } from '../../core/ports/event-log.js';
import { BEGIN, inTransaction } from './transaction.js';

/** Where the store says what happened to its connections (a pino logger fits). */
export interface StoreLog {
  warn(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
}

const CHANNEL = 'rewardbus_events';
/** A NOTIFY payload holds at most 8,000 bytes: this many user ids (36 characters and a comma). */
const USERS_PER_NOTIFY = 200;
/** How long the listener's probe at start waits for its own notice (see `probe`). */
const PROBE_WAIT_MS = 3_000;
/** Other relays hear of new events within this (their streams then read them by id). */
const NOTIFY_EVERY_MS = 10;
/** How late an append may commit after its event's time: ids commit in any order across players, within this. */
const LATE_COMMIT_MS = 30_000;

interface Row {
  id: string;
  user_id: string;
  type: string;
  data: unknown;
  created_at: string;
}
const toEvent = (r: Row): PlayerEvent => ({ id: Number(r.id), userId: r.user_id, type: r.type, data: r.data, createdAt: Number(r.created_at) });

/**
 * Appends a player's event in the caller's transaction. A player's appends take turns (an
 * advisory lock), so their ids commit in order and a stream reading by id misses none.
 */
export async function appendEventIn(c: PoolClient, userId: string, type: string, data: unknown): Promise<PlayerEvent> {
  await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 1))', [`e:${userId}`]);
  const { rows } = await c.query<Row>('INSERT INTO events (user_id, type, data, created_at) VALUES ($1, $2, $3, $4) RETURNING *', [userId, type, JSON.stringify(data), Date.now()]);
  return toEvent(rows[0]!);
}

/**
 * Player events, the webhook inbox and ramp sessions on PostgreSQL, shared by every relay.
 *
 * A player's appends take turns (an advisory lock), so their ids commit in order. Every relay
 * hears of new events through NOTIFY, batched per event-loop turn and naming only the players
 * (NOTIFY serializes the commits that carry it, so it never rides on an append's transaction);
 * a listener then reads each named player's events after the last it handed on, in id order,
 * so a stream misses nothing and a resume from Last-Event-ID works on any relay.
 */
export function pgEventLog(
  pool: Pool,
  connectionString: string,
  log?: StoreLog,
): EventLog & { subscribe(fn: (e: PlayerEvent) => void, listening?: (userId: string) => boolean): Promise<() => Promise<void>>; announce(userId: string): void } {
  const pending = new Set<string>();
  let scheduled = false;

  /** Tells every relay that these players have new events; best effort (a stream resumes by id). */
  function announce(userId: string) {
    pending.add(userId);
    if (scheduled) return;
    scheduled = true;
    // One wake-up per interval whatever the load: NOTIFY takes a lock every committing notifier
    // waits on, so under load it must not ride on (or follow) every payout.
    setTimeout(async () => {
      const users = [...pending];
      pending.clear();
      scheduled = false;
      const c = await pool.connect().catch(() => undefined);
      if (!c) return; // closing
      try {
        // One round trip. The events are durable already: the notice need not wait for a disk.
        const notices = [];
        for (let i = 0; i < users.length; i += USERS_PER_NOTIFY)
          notices.push(`SELECT pg_notify('${CHANNEL}', ${c.escapeLiteral(users.slice(i, i + USERS_PER_NOTIFY).join(','))});`);
        await c.query(`${BEGIN}; SET LOCAL synchronous_commit = off; ${notices.join(' ')} COMMIT;`);
      } catch {
        await c.query('ROLLBACK').catch(() => undefined);
      } finally {
        c.release();
      }
    }, NOTIFY_EVERY_MS);
  }

  const transaction = <T>(work: (c: PoolClient) => Promise<T>) => inTransaction(pool, work);

  const since = async (userId: string, afterId: number, limit = 500) =>
    (await pool.query<Row>('SELECT * FROM events WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3', [userId, afterId, limit])).rows.map(toEvent);

  return {
    announce,
    async append(userId, type, data) {
      refuseRewardEvent(type);
      const event = await transaction((c) => appendEventIn(c, userId, type, data));
      announce(userId);
      return event;
    },
    since,
    // A player's ids commit in order (the append lock): every event up to the latest is committed.
    latestId: async (userId) => Number((await pool.query<{ m: string | null }>('SELECT max(id) AS m FROM events WHERE user_id = $1', [userId])).rows[0]?.m ?? 0),
    async receiveWebhook(eventId, type, referenceId, e) {
      const r = await transaction(async (c) => {
        const fresh =
          (
            await c.query('INSERT INTO webhook_events (event_id, type, reference_id, received_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [
              eventId,
              type,
              referenceId ?? null,
              Date.now(),
            ])
          ).rowCount === 1;
        if (!fresh) return { fresh: false };
        const userId = e && referenceId && (await c.query<{ user_id: string }>('SELECT user_id FROM ramp_sessions WHERE reference_id = $1', [referenceId])).rows[0]?.user_id;
        return e && userId ? { fresh: true, event: await appendEventIn(c, userId, e.type, e.data) } : { fresh: true };
      });
      if (r.event) announce(r.event.userId);
      return r;
    },
    webhookReceived: async (eventId) => (await pool.query('SELECT 1 FROM webhook_events WHERE event_id = $1', [eventId])).rowCount === 1,
    recentWebhooks: async (limit) =>
      (
        await pool.query<{ event_id: string; type: string; reference_id: string | null; received_at: string; user_id: string | null }>(
          'SELECT w.*, r.user_id FROM webhook_events w LEFT JOIN ramp_sessions r ON r.reference_id = w.reference_id ORDER BY w.received_at DESC LIMIT $1',
          [limit],
        )
      ).rows.map((w) => ({
        eventId: w.event_id,
        type: w.type,
        ...(w.reference_id ? { referenceId: w.reference_id } : {}),
        receivedAt: Number(w.received_at),
        actedOn: w.user_id !== null,
      })),
    rememberRampSession: async (referenceId, userId, sessionId, expiresAt) => {
      await pool.query(
        'INSERT INTO ramp_sessions (reference_id, user_id, session_id, expires_at) VALUES ($1, $2, $3, $4)' +
          ' ON CONFLICT (reference_id) DO UPDATE SET user_id = $2, session_id = $3, expires_at = $4',
        [referenceId, userId, sessionId, expiresAt],
      );
    },
    /**
     * Every event appended by any relay, per player in id order. The listening connection comes
     * back by itself after PostgreSQL restarts (with backoff), and then every player with events
     * since shortly before the drop is read again from where it was, so no stream misses one.
     * Returns a function that stops listening.
     */
    async subscribe(fn, listening = () => true) {
      // Handed on so far, per player; players not seen yet start after what existed shortly before
      // the subscription: an append under way elsewhere took its id before the highest committed
      // one, and commits after it (a stream here dedupes by id what is read again).
      const floor = Number((await pool.query<{ m: string | null }>('SELECT max(id) AS m FROM events WHERE created_at < $1', [Date.now() - LATE_COMMIT_MS])).rows[0]?.m ?? 0);
      const last = new Map<string, number>();
      let chain = Promise.resolve();
      const deliver = (users: Iterable<string>) => {
        const todo = [...users];
        chain = chain
          .then(async () => {
            for (const userId of todo) {
              // Only players with a stream open here are read: the others' streams are elsewhere
              // (and a stream opened later reads its own backlog from Last-Event-ID).
              if (!listening(userId)) {
                last.delete(userId);
                continue;
              }
              for (let after = last.get(userId) ?? floor, page = await since(userId, after); page.length; page = await since(userId, after)) {
                for (const e of page) fn(e);
                after = page[page.length - 1]!.id;
                last.set(userId, after);
                if (page.length < 500) break;
              }
            }
            if (last.size > 100_000) last.clear();
          })
          .catch(() => undefined);
      };

      let listener: pg.Client | undefined;
      let stopped = false;
      let lostAt: number | undefined;
      let retry: ReturnType<typeof setTimeout> | undefined;
      async function listen(): Promise<void> {
        const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5_000, keepAlive: true });
        client.on('error', () => undefined);
        client.on('notification', (n) => n.channel === CHANNEL && deliver(new Set((n.payload ?? '').split(',').filter(Boolean))));
        client.on('end', () => {
          if (stopped || listener !== client) return;
          listener = undefined;
          lostAt ??= Date.now();
          log?.warn({ event: 'listener_lost' }, 'the PostgreSQL listener was disconnected: live events from other relays wait until it is back');
          comeBack(0);
        });
        try {
          await client.connect();
          await client.query(`LISTEN ${CHANNEL}`);
        } catch (err) {
          await client.end().catch(() => undefined);
          throw err;
        }
        listener = client;
      }
      /**
       * Whether the listener hears a notice sent through the pool, said in the log if not (once,
       * at start): through a pooler in transaction mode LISTEN lands on a server connection the
       * pooler lends to other clients, and no notice ever reaches this relay, in silence.
       */
      async function probe() {
        const client = listener;
        if (!client) return;
        const channel = `rewardbus_probe_${randomBytes(6).toString('hex')}`;
        let timer: ReturnType<typeof setTimeout> | undefined;
        let onNotice: ((n: pg.Notification) => void) | undefined;
        const heard = new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), PROBE_WAIT_MS);
          timer.unref();
          onNotice = (n) => n.channel === channel && resolve(true);
          client.on('notification', onNotice);
        });
        try {
          await client.query(`LISTEN ${channel}`);
          await pool.query(`SELECT pg_notify('${channel}', '')`);
          const ok = await heard;
          if (ok) log?.info({ event: 'listener_heard' }, 'the PostgreSQL listener hears notices sent through the pool');
          else if (!stopped && listener === client) {
            log?.warn(
              { event: 'listener_unheard' },
              'the PostgreSQL listener did not hear a notice sent through the pool: is its connection (RELAY_DATABASE_LISTEN_URL, by default RELAY_DATABASE_URL) ' +
                'through a pooler in transaction mode? Streams hear payouts made on other relays only when they reconnect',
            );
          }
          await client.query(`UNLISTEN ${channel}`);
        } catch {
          // Closing, or the listener lost: it says so itself.
        } finally {
          clearTimeout(timer);
          client.off('notification', onNotice!);
        }
      }
      function comeBack(attempt: number) {
        retry = setTimeout(
          async () => {
            if (stopped) return;
            try {
              await listen();
            } catch {
              return comeBack(attempt + 1);
            }
            // Whatever was appended while nobody listened (and a little before: commits land in
            // any order across players) is read now, per player from where each was.
            const since = (lostAt ?? Date.now()) - LATE_COMMIT_MS;
            lostAt = undefined;
            const { rows } = await pool
              .query<{ user_id: string }>('SELECT DISTINCT user_id FROM events WHERE id > (SELECT coalesce(max(id), 0) FROM events WHERE created_at < $1)', [since])
              .catch(() => ({ rows: [] as Array<{ user_id: string }> }));
            deliver(rows.map((r) => r.user_id));
            log?.info({ event: 'listener_back', players: rows.length }, 'the PostgreSQL listener is back; streams caught up');
          },
          Math.min(30_000, 250 * 2 ** attempt),
        );
        retry.unref();
      }
      await listen();
      void probe();
      return async () => {
        stopped = true;
        clearTimeout(retry);
        await listener?.end().catch(() => undefined);
      };
    },
  };
}
