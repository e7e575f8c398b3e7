import { type EventLog, type PlayerEvent, refuseRewardEvent } from '../../core/ports/event-log.js';
import type { SqliteDb } from './db.js';

interface Row {
  id: number;
  user_id: string;
  type: string;
  data: string;
  created_at: number;
}
const toEvent = (r: Row): PlayerEvent => ({ id: r.id, userId: r.user_id, type: r.type, data: JSON.parse(r.data) as unknown, createdAt: r.created_at });

/**
 * Appends a player's event inside the caller's transaction. Built from what was written, not read
 * back: every told settlement appends one of these.
 */
export function eventAppender(db: SqliteDb['db']) {
  const insert = db.prepare<[string, string, string, number]>('INSERT INTO events (user_id, type, data, created_at) VALUES (?, ?, ?, ?)');
  return function appendEvent(userId: string, type: string, data: unknown): PlayerEvent {
    const createdAt = Date.now();
    const id = Number(insert.run(userId, type, JSON.stringify(data), createdAt).lastInsertRowid);
    return { id, userId, type, data, createdAt };
  };
}

/** The event log on an open, migrated database (which its owner closes). */
export function sqliteEventLog({ db, write }: SqliteDb): EventLog {
  const append = eventAppender(db);
  const q = {
    since: db.prepare<[number, string, number], Row>('SELECT * FROM events WHERE id > ? AND user_id = ? ORDER BY id LIMIT ?'),
    received: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM webhook_events WHERE event_id = ?'),
    webhook: db.prepare<[string, string, string | null, number]>('INSERT OR IGNORE INTO webhook_events (event_id, type, reference_id, received_at) VALUES (?, ?, ?, ?)'),
    ramp: db.prepare<[string, string, string, number]>('INSERT OR REPLACE INTO ramp_sessions (reference_id, user_id, session_id, expires_at) VALUES (?, ?, ?, ?)'),
    playerOf: db.prepare<[string], { user_id: string }>('SELECT user_id FROM ramp_sessions WHERE reference_id = ?'),
    webhooks: db.prepare<[number], { event_id: string; type: string; reference_id: string | null; received_at: number; user_id: string | null }>(
      'SELECT w.*, r.user_id FROM webhook_events w LEFT JOIN ramp_sessions r ON r.reference_id = w.reference_id ORDER BY w.received_at DESC LIMIT ?',
    ),
  };
  return {
    append: async (userId, type, data) => {
      refuseRewardEvent(type);
      return write(() => append(userId, type, data));
    },
    since: async (userId, afterId, limit = 500) => q.since.all(afterId, userId, limit).map(toEvent),
    receiveWebhook: (eventId, type, referenceId, e) =>
      write(() => {
        if (q.webhook.run(eventId, type, referenceId ?? null, Date.now()).changes === 0) return { fresh: false };
        const userId = e && referenceId && q.playerOf.get(referenceId)?.user_id;
        return e && userId ? { fresh: true, event: append(userId, e.type, e.data) } : { fresh: true };
      }),
    webhookReceived: async (eventId) => q.received.get(eventId) !== undefined,
    recentWebhooks: async (limit) =>
      q.webhooks
        .all(limit)
        .map((w) => ({ eventId: w.event_id, type: w.type, ...(w.reference_id ? { referenceId: w.reference_id } : {}), receivedAt: w.received_at, actedOn: w.user_id !== null })),
    rememberRampSession: (referenceId, userId, sessionId, expiresAt) => write(() => void q.ramp.run(referenceId, userId, sessionId, expiresAt)),
  };
}
