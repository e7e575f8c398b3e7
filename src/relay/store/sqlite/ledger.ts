import type { SqliteDb } from './db.js';
import { limitBlock, repeatBlock, utcDay } from '../../../wire/earning-rules.js';
import { RESERVING_SQL, toLedgerEntry, type LedgerRow as Row } from '../ledger-row.js';
import {
  RESERVING_STATES,
  type ClaimLimits,
  type ClaimResult,
  type Ledger,
  type LedgerEntry,
  type LedgerState,
  type NewClaim,
  type Settlement,
  type AuditNote,
} from '../ledger.js';

const SCHEMA = `
-- Rows, ids (UUIDv7) and the state index grow at their ends; only the two per-player indexes
-- take a write in the middle: few pages per commit, which is what a synchronous=FULL commit costs.
CREATE TABLE IF NOT EXISTS rewards (
  seq             INTEGER PRIMARY KEY,
  id              TEXT NOT NULL UNIQUE,
  user_id         TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  request_hash    TEXT NOT NULL,
  achievement_id  TEXT NOT NULL,
  sats            INTEGER NOT NULL,
  state           TEXT NOT NULL,
  -- While sending: 'claimed' until the payment is about to leave, then 'sent' (a recovery point).
  phase           TEXT NOT NULL DEFAULT 'sent',
  reason          TEXT,
  payment_id      TEXT,
  gamertag        TEXT,
  occurred_at     TEXT,
  day             TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  settled_at      INTEGER,
  UNIQUE (user_id, idempotency_key)
);
CREATE INDEX IF NOT EXISTS rewards_by_achievement ON rewards (user_id, achievement_id, created_at);
CREATE INDEX IF NOT EXISTS rewards_by_state ON rewards (state) WHERE state IN ('sending', 'needs_review');
-- Operators' decisions: who settled what by hand, when.
CREATE TABLE IF NOT EXISTS audit (
  seq        INTEGER PRIMARY KEY,
  reward_id  TEXT NOT NULL,
  actor      TEXT NOT NULL,
  action     TEXT NOT NULL,
  from_state TEXT NOT NULL,
  to_state   TEXT NOT NULL,
  at         INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_by_reward ON audit (reward_id);
-- Sats reserved per UTC day: scope '*' is the project's budget, 'u:<userId>' a player's cap.
CREATE TABLE IF NOT EXISTS reserved (
  scope TEXT NOT NULL,
  day   TEXT NOT NULL,
  sats  INTEGER NOT NULL,
  PRIMARY KEY (scope, day)
) WITHOUT ROWID;
`;


/** The ledger on an open database (which its owner closes). */
export function sqliteLedger({ db, write }: SqliteDb): Ledger {
  db.exec(SCHEMA);
  // Ledgers from before send phases: what was sending then may have been sent.
  if (!(db.pragma('table_info(rewards)') as Array<{ name: string }>).some((c) => c.name === 'phase')) db.exec(`ALTER TABLE rewards ADD COLUMN phase TEXT NOT NULL DEFAULT 'sent'`);

  const q = {
    byId: db.prepare<[string], Row>('SELECT * FROM rewards WHERE id = ?'),
    byKey: db.prepare<[string, string], Row>('SELECT * FROM rewards WHERE user_id = ? AND idempotency_key = ?'),
    lastReserving: db.prepare<[string, string], Pick<Row, 'created_at'>>(
      `SELECT created_at FROM rewards WHERE user_id = ? AND achievement_id = ? AND ${RESERVING_SQL} ORDER BY created_at DESC LIMIT 1`,
    ),
    history: db.prepare<[string, number], Row>('SELECT * FROM rewards WHERE user_id = ? ORDER BY seq DESC LIMIT ?'),
    inState: db.prepare<[string], Row>('SELECT * FROM rewards WHERE state = ? ORDER BY created_at'),
    insert: db.prepare(
      `INSERT INTO rewards (id, user_id, idempotency_key, request_hash, achievement_id, sats, state, phase, reason, occurred_at, day, created_at)
       VALUES (@id, @userId, @idempotencyKey, @requestHash, @achievementId, @sats, @state, 'claimed', @reason, @occurredAt, @day, @createdAt)`,
    ),
    reclaim: db.prepare(`UPDATE rewards SET state = @state, phase = 'claimed', reason = @reason, day = @day, created_at = @createdAt WHERE id = @id`),
    // The compare-and-set is in the statement: only an entry still sending and not yet sent moves.
    markSent: db.prepare<[string]>(`UPDATE rewards SET phase = 'sent' WHERE id = ? AND state = 'sending' AND phase = 'claimed'`),
    update: db.prepare(
      `UPDATE rewards SET state = @state, reason = @reason, payment_id = coalesce(@paymentId, payment_id),
       gamertag = coalesce(@gamertag, gamertag), settled_at = @settledAt WHERE id = @id`,
    ),
    audit: db.prepare<[string, string, string, string, string, number]>('INSERT INTO audit (reward_id, actor, action, from_state, to_state, at) VALUES (?, ?, ?, ?, ?, ?)'),
    audits: db.prepare<[string], { reward_id: string; actor: string; action: string; from_state: LedgerState; to_state: LedgerState; at: number }>('SELECT * FROM audit WHERE reward_id = ? ORDER BY seq'),
    report: db.prepare<[string], { day: string; state: LedgerState; count: number; sats: number; players: number }>(
      'SELECT day, state, count(*) AS count, sum(sats) AS sats, count(DISTINCT user_id) AS players FROM rewards WHERE day >= ? GROUP BY day, state ORDER BY day',
    ),
    recent: db.prepare<[string | null, string | null, string | null, string | null, number], Row>(
      'SELECT * FROM rewards WHERE (? IS NULL OR user_id = ?) AND (? IS NULL OR achievement_id = ?) ORDER BY seq DESC LIMIT ?',
    ),
    reserved: db.prepare<[string, string], { sats: number }>('SELECT sats FROM reserved WHERE scope = ? AND day = ?'),
    reserve: db.prepare<[string, string, number]>(
      'INSERT INTO reserved (scope, day, sats) VALUES (?, ?, ?) ON CONFLICT (scope, day) DO UPDATE SET sats = sats + excluded.sats',
    ),
  };

  const reservedSats = (scope: string, day: string) => q.reserved.get(scope, day)?.sats ?? 0;
  function reserve(userId: string, day: string, sats: number) {
    q.reserve.run('*', day, sats);
    q.reserve.run(`u:${userId}`, day, sats);
  }

  /** The earning rules, on what this transaction reads (better-sqlite3 runs it alone). */
  function refusal(c: NewClaim, limits: ClaimLimits, now: number, day: string): string | undefined {
    const last = q.lastReserving.get(c.userId, c.achievementId);
    return repeatBlock(c.repeat, last && Number(last.created_at), now)?.reason ?? limitBlock(c.sats, { user: reservedSats(`u:${c.userId}`, day), project: reservedSats('*', day) }, limits);
  }

  function claimNow(c: NewClaim, limits: ClaimLimits, now: number): ClaimResult {
    const existing = q.byKey.get(c.userId, c.idempotencyKey);
    if (existing && (existing.state !== 'deferred' || existing.request_hash !== c.requestHash)) {
      return { kind: 'existing', entry: toLedgerEntry(existing) };
    }
    const day = utcDay(now);
    const reason = c.rejectReason ?? refusal(c, limits, now, day);
    const state: LedgerState = reason ? 'rejected' : 'sending';
    if (existing) q.reclaim.run({ id: existing.id, state, reason: reason ?? null, day, createdAt: now });
    else q.insert.run({ ...c, occurredAt: c.occurredAt ?? null, state, reason: reason ?? null, day, createdAt: now });
    if (!reason) reserve(c.userId, day, c.sats);
    const { repeat: _repeat, rejectReason: _rejectReason, ...fields } = c;
    return { kind: 'created', entry: { ...(existing ? toLedgerEntry(existing) : fields), state, ...(reason ? { reason } : { phase: 'claimed' as const }), createdAt: now } };
  }

  function settleNow(id: string, from: readonly LedgerState[], to: Settlement, now: number, audit?: AuditNote): LedgerEntry | undefined {
    const row = q.byId.get(id);
    if (!row || !from.includes(row.state)) return undefined;
    if (audit) q.audit.run(id, audit.actor, audit.action, row.state, to.state, now);
    q.update.run({
      id,
      state: to.state,
      reason: 'reason' in to ? to.reason : null,
      paymentId: 'paymentId' in to ? (to.paymentId ?? null) : null,
      gamertag: 'gamertag' in to ? (to.gamertag ?? null) : null,
      settledAt: to.state === 'paid' || to.state === 'failed' ? now : null,
    });
    if (RESERVING_STATES.includes(row.state) && !RESERVING_STATES.includes(to.state)) reserve(row.user_id, row.day, -row.sats);
    const { state, ...rest } = to;
    const entry = toLedgerEntry(row);
    delete entry.reason;
    return { ...entry, ...rest, state, ...(to.state === 'paid' || to.state === 'failed' ? { settledAt: now } : {}) };
  }

  return {
    find: async (userId, key) => {
      const r = q.byKey.get(userId, key);
      return r && toLedgerEntry(r);
    },
    claim: (c, limits, now) => write(() => claimNow(c, limits, now ?? Date.now())),
    settle: (id, from, to, now = Date.now(), audit) => write(() => settleNow(id, from, to, now, audit)),
    markSent: (id) => write(() => q.markSent.run(id).changes === 1),
    releaseUnsent: (id, now = Date.now()) =>
      write(() => (q.byId.get(id)?.phase === 'claimed' ? settleNow(id, ['sending'], { state: 'deferred', reason: 'interrupted_before_send' }, now) : undefined)),
    get: async (id) => {
      const r = q.byId.get(id);
      return r && toLedgerEntry(r);
    },
    history: async (userId, limit) => q.history.all(userId, limit).map(toLedgerEntry),
    inState: async (state) => q.inState.all(state).map(toLedgerEntry),
    budgetUsed: async (day) => reservedSats('*', day),
    report: async (fromDay) => q.report.all(fromDay),
    recent: async ({ userId, achievementId }, limit) => q.recent.all(userId ?? null, userId ?? null, achievementId ?? null, achievementId ?? null, limit).map(toLedgerEntry),
    audits: async (id) => q.audits.all(id).map((a) => ({ rewardId: a.reward_id, actor: a.actor, action: a.action, fromState: a.from_state, toState: a.to_state, at: a.at })),
    // One process owns this file: whatever was sending before it started was abandoned.
    abandoned: async (_now, startedAt) => q.inState.all('sending').map(toLedgerEntry).filter((e) => e.createdAt < startedAt),
    close: async () => undefined,
  };
}
