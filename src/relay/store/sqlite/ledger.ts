import type { SqliteDb } from './db.js';
import { utcDay } from '../../../wire/earning-rules.js';
import { claimedState, keyDecision, refusal, tooEarly } from '../claim-decision.js';
import { RESERVING_SQL, toLedgerEntry, type LedgerRow as Row } from '../ledger-row.js';
import {
  REWARD_EVENT,
  RESERVING_STATES,
  TOLD_STATES,
  type ClaimLimits,
  type ClaimResult,
  type Ledger,
  type LedgerEntry,
  type NewClaim,
  type Settled,
  type Settlement,
  type AuditNote,
  type LedgerState,
} from '../ledger.js';
import { toRewardRecord } from '../reward-record.js';
import { eventAppender } from './event-log.js';



/** The ledger on an open, migrated database (which its owner closes). */
export function sqliteLedger({ db, write }: SqliteDb): Ledger {
  const appendEvent = eventAppender(db);

  const q = {
    byId: db.prepare<[string], Row>('SELECT * FROM rewards WHERE id = ?'),
    byKey: db.prepare<[string, string], Row>('SELECT * FROM rewards WHERE user_id = ? AND idempotency_key = ?'),
    lastReserving: db.prepare<[string, string], Pick<Row, 'created_at'>>(
      `SELECT created_at FROM rewards WHERE user_id = ? AND achievement_id = ? AND ${RESERVING_SQL} ORDER BY created_at DESC LIMIT 1`,
    ),
    history: db.prepare<[string, number], Row>('SELECT * FROM rewards WHERE user_id = ? ORDER BY seq DESC LIMIT ?'),
    inState: db.prepare<[string], Row>('SELECT * FROM rewards WHERE state = ? ORDER BY created_at'),
    insert: db.prepare(
      `INSERT INTO rewards (id, user_id, idempotency_key, request_hash, achievement_id, sats, state, phase, reason, occurred_at, address, day, created_at)
       VALUES (@id, @userId, @idempotencyKey, @requestHash, @achievementId, @sats, @state, 'claimed', @reason, @occurredAt, @address, @day, @createdAt)`,
    ),
    reclaim: db.prepare(`UPDATE rewards SET state = @state, phase = 'claimed', reason = @reason, address = @address, day = @day, created_at = @createdAt WHERE id = @id`),
    spendNonce: db.prepare<[string, string, number]>('INSERT INTO proof_nonces (nonce, reward_id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING'),
    linked: db.prepare<[string, string, string], { n: number }>('SELECT 1 AS n FROM address_links WHERE address = ? AND day = ? AND user_id = ?'),
    links: db.prepare<[string, string], { n: number }>('SELECT count(*) AS n FROM address_links WHERE address = ? AND day = ?'),
    link: db.prepare<[string, string, string]>('INSERT INTO address_links (address, day, user_id) VALUES (?, ?, ?)'),
    // The compare-and-set is in the statement: only an entry still sending and not yet sent moves.
    markSent: db.prepare<[string]>(`UPDATE rewards SET phase = 'sent' WHERE id = ? AND state = 'sending' AND phase = 'claimed'`),
    // An approved held entry goes on as sending, claimed: from there it is paid like any claim.
    update: db.prepare(
      `UPDATE rewards SET state = @state, phase = CASE WHEN @state = 'sending' THEN 'claimed' ELSE phase END, reason = @reason, payment_id = coalesce(@paymentId, payment_id),
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
  // Every entry with an address reserves under its scope too (counted with or without a cap, so
  // a release always undoes what was reserved).
  function reserve(userId: string, address: string | null, day: string, sats: number) {
    q.reserve.run('*', day, sats);
    q.reserve.run(`u:${userId}`, day, sats);
    if (address !== null) q.reserve.run(`a:${address}`, day, sats);
  }

  /** The player hears of the entry as it now stands, in the transaction that changed it. */
  const told = (entry: LedgerEntry) => (TOLD_STATES.includes(entry.state) ? { event: appendEvent(entry.userId, REWARD_EVENT, toRewardRecord(entry)) } : {});

  function claimNow(c: NewClaim, limits: ClaimLimits, now: number): ClaimResult {
    const existing = q.byKey.get(c.userId, c.idempotencyKey);
    const decision = keyDecision(existing && { state: existing.state, requestHash: existing.request_hash }, c);
    if (decision === 'existing') return { kind: 'existing', entry: toLedgerEntry(existing!) };
    const day = utcDay(now);
    // The earning rules, on what this transaction reads (better-sqlite3 runs it alone).
    const early = tooEarly(c, now) !== undefined;
    let reason: string | undefined = early ? 'too_early' : undefined;
    if (!early) {
      // A proof is spent by any decided claim, whatever the decision: never twice.
      const proofUsed = c.proofNonce !== undefined && q.spendNonce.run(c.proofNonce, existing?.id ?? c.id, now).changes === 0;
      const last = q.lastReserving.get(c.userId, c.achievementId);
      const facts = {
        lastReservingAt: last && Number(last.created_at),
        userSats: reservedSats(`u:${c.userId}`, day),
        projectSats: reservedSats('*', day),
        addressSats: c.address === undefined ? 0 : reservedSats(`a:${c.address}`, day),
        proofUsed,
      };
      reason = refusal(c, facts, limits, now);
    }
    const state = early ? 'deferred' : claimedState(reason, c);
    const address = c.address ?? null;
    if (existing) q.reclaim.run({ id: existing.id, state, reason: reason ?? null, day, createdAt: now, address });
    else q.insert.run({ ...c, occurredAt: c.occurredAt ?? null, address, state, reason: reason ?? null, day, createdAt: now });
    if (RESERVING_STATES.includes(state)) reserve(c.userId, address, day, c.sats);
    const { repeat: _repeat, rejectReason: _rejectReason, playStartedAt: _p, minPlayMs: _m, proofNonce: _n, hold: _h, ...fields } = c;
    const entry: LedgerEntry = { ...(existing ? toLedgerEntry(existing) : fields), state, ...(reason ? { reason } : {}), ...(state === 'sending' ? { phase: 'claimed' as const } : {}), createdAt: now };
    if (!reason) delete entry.reason;
    if (state !== 'sending') delete entry.phase;
    if (c.address !== undefined) entry.address = c.address;
    return { kind: 'created', entry, ...told(entry) };
  }

  function settleNow(id: string, from: readonly LedgerState[], to: Settlement, now: number, audit?: AuditNote): Settled | undefined {
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
    // Leaving the reserving states frees the sats; coming back (a decision contradicted) takes them again.
    const reserving = RESERVING_STATES.includes(row.state);
    if (reserving !== RESERVING_STATES.includes(to.state)) reserve(row.user_id, row.address ?? null, row.day, reserving ? -row.sats : row.sats);
    const { state, ...rest } = to;
    const before = toLedgerEntry(row);
    delete before.reason;
    delete before.phase;
    const entry: LedgerEntry = { ...before, ...rest, state, ...(to.state === 'sending' ? { phase: 'claimed' as const } : {}), ...(to.state === 'paid' || to.state === 'failed' ? { settledAt: now } : {}) };
    if (!('gamertag' in to) || to.gamertag === undefined) {
      if (row.gamertag !== null) entry.gamertag = row.gamertag;
      else delete entry.gamertag;
    }
    if (!('paymentId' in to) || to.paymentId === undefined) {
      if (row.payment_id !== null) entry.paymentId = row.payment_id;
      else delete entry.paymentId;
    }
    return { entry, from: row.state, ...told(entry) };
  }

  return {
    find: async (userId, key) => {
      const r = q.byKey.get(userId, key);
      return r && toLedgerEntry(r);
    },
    claim: (c, limits, now) => write(() => claimNow(c, limits, now ?? Date.now())),
    settle: (id, from, to, options = {}) => write(() => settleNow(id, from, to, options.now ?? Date.now(), options.audit)),
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
    linkAddress: (address, day, userId, max) =>
      write(() => {
        if (q.linked.get(address, day, userId)) return true;
        if (max > 0 && q.links.get(address, day)!.n >= max) return false;
        q.link.run(address, day, userId);
        return true;
      }),
    report: async (fromDay) => q.report.all(fromDay),
    recent: async ({ userId, achievementId }, limit) => q.recent.all(userId ?? null, userId ?? null, achievementId ?? null, achievementId ?? null, limit).map(toLedgerEntry),
    audits: async (id) => q.audits.all(id).map((a) => ({ rewardId: a.reward_id, actor: a.actor, action: a.action, fromState: a.from_state, toState: a.to_state, at: a.at })),
    // One process owns this file: whatever was sending before it started was abandoned.
    abandoned: async (_now, startedAt) => q.inState.all('sending').map(toLedgerEntry).filter((e) => e.createdAt < startedAt),
    close: async () => undefined,
  };
}
