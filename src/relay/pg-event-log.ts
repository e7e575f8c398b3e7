import pg, { type Pool, type PoolClient } from 'pg';
import type { EventLog, PlayerEvent } from './event-log.js';

const CHANNEL = 'rewardbus_events';

interface Row {
  id: string;
  user_id: string;
  type: string;
  data: unknown;
  created_at: string;
}
const toEvent = (r: Row): PlayerEvent => ({ id: Number(r.id), userId: r.user_id, type: r.type, data: r.data, createdAt: Number(r.created_at) });

/**
 * Player events, the webhook inbox and ramp sessions on PostgreSQL, shared by every relay. Each
 * append is announced with NOTIFY, so a player's stream on one relay hears what another relay
 * paid; a player's appends take turns (an advisory lock), so their ids commit in order and a
 * resume from Last-Event-ID misses nothing.
 */
export function pgEventLog(pool: Pool, connectionString: string): EventLog & { subscribe(fn: (e: PlayerEvent) => void): Promise<() => Promise<void>> } {
  async function appendIn(c: PoolClient | Pool, userId: string, type: string, data: unknown): Promise<PlayerEvent> {
    await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 1))', [`e:${userId}`]);
    const { rows } = await c.query<Row>('INSERT INTO events (user_id, type, data, created_at) VALUES ($1, $2, $3, $4) RETURNING *', [userId, type, JSON.stringify(data), Date.now()]);
    const event = toEvent(rows[0]!);
    await c.query('SELECT pg_notify($1, $2)', [CHANNEL, String(event.id)]);
    return event;
  }

  async function inTransaction<T>(work: (c: PoolClient) => Promise<T>): Promise<T> {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      const result = await work(c);
      await c.query('COMMIT');
      return result;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  }

  return {
    append: (userId, type, data) => inTransaction((c) => appendIn(c, userId, type, data)),
    since: async (userId, afterId, limit = 500) =>
      (await pool.query<Row>('SELECT * FROM events WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3', [userId, afterId, limit])).rows.map(toEvent),
    receiveWebhook: (eventId, type, referenceId, toPlayerEvent) =>
      inTransaction(async (c) => {
        const fresh = (await c.query('INSERT INTO webhook_events (event_id, type, reference_id, received_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [eventId, type, referenceId ?? null, Date.now()])).rowCount === 1;
        if (!fresh) return { fresh: false };
        const userId = referenceId && (await c.query<{ user_id: string }>('SELECT user_id FROM ramp_sessions WHERE reference_id = $1', [referenceId])).rows[0]?.user_id;
        const e = userId ? toPlayerEvent(userId) : undefined;
        return e && userId ? { fresh: true, event: await appendIn(c, userId, e.type, e.data) } : { fresh: true };
      }),
    rememberRampSession: async (referenceId, userId, sessionId, expiresAt) => {
      await pool.query(
        'INSERT INTO ramp_sessions (reference_id, user_id, session_id, expires_at) VALUES ($1, $2, $3, $4) ON CONFLICT (reference_id) DO UPDATE SET user_id = $2, session_id = $3, expires_at = $4',
        [referenceId, userId, sessionId, expiresAt],
      );
    },
    /** Every event appended by any relay, as it commits. Returns a function that stops listening. */
    async subscribe(fn) {
      const listener = new pg.Client({ connectionString });
      await listener.connect();
      // Notifications come in commit order: read and hand them on in that order too.
      let chain = Promise.resolve();
      listener.on('notification', (n) => {
        chain = chain.then(() =>
          pool.query<Row>('SELECT * FROM events WHERE id = $1', [Number(n.payload)]).then(
            ({ rows }) => void (rows[0] && fn(toEvent(rows[0]))),
            () => undefined,
          ),
        );
      });
      // A dropped listening connection is logged by the pool's owner; the stream resumes with Last-Event-ID.
      listener.on('error', () => undefined);
      await listener.query(`LISTEN ${CHANNEL}`);
      return () => listener.end();
    },
  };
}
