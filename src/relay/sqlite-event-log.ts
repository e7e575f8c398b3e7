import type { EventLog, PlayerEvent } from './event-log.js';
import type { SqliteDb } from './sqlite-db.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  id         INTEGER PRIMARY KEY,
  user_id    TEXT NOT NULL,
  type       TEXT NOT NULL,
  data       TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
-- By player: a stream resuming from Last-Event-ID 0 (or any old id) must not scan every event.
CREATE INDEX IF NOT EXISTS events_by_player ON events (user_id, id);
CREATE TABLE IF NOT EXISTS webhook_events (
  event_id     TEXT PRIMARY KEY,
  type         TEXT NOT NULL,
  reference_id TEXT,
  received_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ramp_sessions (
  reference_id TEXT PRIMARY KEY,
  user_id      TEXT NOT NULL,
  session_id   TEXT NOT NULL,
  expires_at   INTEGER NOT NULL
) WITHOUT ROWID;
`;

interface Row {
  id: number;
  user_id: string;
  type: string;
  data: string;
  created_at: number;
}
const toEvent = (r: Row): PlayerEvent => ({ id: r.id, userId: r.user_id, type: r.type, data: JSON.parse(r.data) as unknown, createdAt: r.created_at });

export function sqliteEventLog({ db, write }: SqliteDb): EventLog {
  db.exec(SCHEMA);
  const q = {
    insert: db.prepare<[string, string, string, number]>('INSERT INTO events (user_id, type, data, created_at) VALUES (?, ?, ?, ?)'),
    since: db.prepare<[number, string, number], Row>('SELECT * FROM events WHERE id > ? AND user_id = ? ORDER BY id LIMIT ?'),
    received: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM webhook_events WHERE event_id = ?'),
    webhook: db.prepare<[string, string, string | null, number]>('INSERT OR IGNORE INTO webhook_events (event_id, type, reference_id, received_at) VALUES (?, ?, ?, ?)'),
    ramp: db.prepare<[string, string, string, number]>('INSERT OR REPLACE INTO ramp_sessions (reference_id, user_id, session_id, expires_at) VALUES (?, ?, ?, ?)'),
    playerOf: db.prepare<[string], { user_id: string }>('SELECT user_id FROM ramp_sessions WHERE reference_id = ?'),
    webhooks: db.prepare<[number], { event_id: string; type: string; reference_id: string | null; received_at: number; user_id: string | null }>(
      'SELECT w.*, r.user_id FROM webhook_events w LEFT JOIN ramp_sessions r ON r.reference_id = w.reference_id ORDER BY w.received_at DESC LIMIT ?',
    ),
  };
  // Built from what was written, not read back: a payout appends one of these.
  function append(userId: string, type: string, data: unknown): PlayerEvent {
    const createdAt = Date.now();
    const id = Number(q.insert.run(userId, type, JSON.stringify(data), createdAt).lastInsertRowid);
    return { id, userId, type, data, createdAt };
  }

  return {
    append: (userId, type, data) => write(() => append(userId, type, data)),
    since: async (userId, afterId, limit = 500) => q.since.all(afterId, userId, limit).map(toEvent),
    receiveWebhook: (eventId, type, referenceId, e) =>
      write(() => {
        if (q.webhook.run(eventId, type, referenceId ?? null, Date.now()).changes === 0) return { fresh: false };
        const userId = e && referenceId && q.playerOf.get(referenceId)?.user_id;
        return e && userId ? { fresh: true, event: append(userId, e.type, e.data) } : { fresh: true };
      }),
    webhookReceived: async (eventId) => q.received.get(eventId) !== undefined,
    recentWebhooks: async (limit) =>
      q.webhooks.all(limit).map((w) => ({ eventId: w.event_id, type: w.type, ...(w.reference_id ? { referenceId: w.reference_id } : {}), receivedAt: w.received_at, actedOn: w.user_id !== null })),
    rememberRampSession: (referenceId, userId, sessionId, expiresAt) => write(() => void q.ramp.run(referenceId, userId, sessionId, expiresAt)),
  };
}
