import type { SqliteDb } from './db.js';
import { utcDay } from '../../../wire/earning-rules.js';
import { claimedState, keyDecision, refusal, tooEarly } from '../claim-decision.js';
import { RESERVING_SQL, toLedgerEntry, type LedgerRow as Row } from '../ledger-row.js';
import {
  inChunks,
  PRUNE_CHUNK,
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
import { ROW_COLUMNS, rowOf, type RawRow } from './reward-rows.js';

/** The ledger on an open, migrated database (which its owner closes). */
export function sqliteLedger({ db, write }: SqliteDb): Ledger {
  const appendEvent = eventAppender(db);

  const q = {
    byId: db.prepare<[string], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE id = ?`).raw(),
    byKey: db.prepare<[string, string], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE user_id = ? AND idempotency_key = ?`).raw(),
    lastReserving: db
      .prepare<[string, string], number>(`SELECT created_at FROM rewards WHERE user_id = ? AND achievement_id = ? AND ${RESERVING_SQL} ORDER BY created_at DESC LIMIT 1`)
      .pluck(),
    history: db.prepare<[string, number], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE user_id = ? ORDER BY seq DESC LIMIT ?`).raw(),
    inState: db.prepare<[string], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE state = ? ORDER BY created_at`).raw(),
    // Positional parameters: binding by name looks every name up afresh, at twice the cost.
    insert: db.prepare<[string, string, string, string, string, number, LedgerState, string | null, string | null, string | null, string, number]>(
      `INSERT INTO rewards (id, user_id, idempotency_key, request_hash, achievement_id, sats, state, phase, reason, occurred_at, address, day, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'claimed', ?, ?, ?, ?, ?)`,
    ),
    reclaim: db.prepare<[LedgerState, string | null, string | null, string, number, string]>(
      `UPDATE rewards SET state = ?, phase = 'claimed', reason = ?, address = ?, day = ?, created_at = ? WHERE id = ?`,
    ),
    spendNonce: db.prepare<[string, string, number]>('INSERT INTO proof_nonces (nonce, reward_id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING'),
    linked: db.prepare<[string, string, string], { n: number }>('SELECT 1 AS n FROM address_links WHERE address = ? AND day = ? AND user_id = ?'),
    links: db.prepare<[string, string], { n: number }>('SELECT count(*) AS n FROM address_links WHERE address = ? AND day = ?'),
    linkedPlayers: db.prepare<[string, string], { user_id: string }>('SELECT user_id FROM address_links WHERE address = ? AND day = ?'),
    link: db.prepare<[string, string, string]>('INSERT INTO address_links (address, day, user_id) VALUES (?, ?, ?)'),
    // The compare-and-set is in the statement: only an entry still sending and not yet sent moves.
    markSent: db.prepare<[string]>(`UPDATE rewards SET phase = 'sent' WHERE id = ? AND state = 'sending' AND phase = 'claimed'`),
    // An approved held entry goes on as sending, claimed: from there it is paid like any claim.
    update: db.prepare<[LedgerState, LedgerState, string | null, string | null, string | null, number | null, string]>(
      `UPDATE rewards SET state = ?, phase = CASE WHEN ? = 'sending' THEN 'claimed' ELSE phase END, reason = ?, payment_id = coalesce(?, payment_id),
       gamertag = coalesce(?, gamertag), settled_at = ? WHERE id = ?`,
    ),
    audit: db.prepare<[string, string, string, string, string, number]>('INSERT INTO audit (reward_id, actor, action, from_state, to_state, at) VALUES (?, ?, ?, ?, ?, ?)'),
    audits: db.prepare<[string], { reward_id: string; actor: string; action: string; from_state: LedgerState; to_state: LedgerState; at: number }>(
      'SELECT * FROM audit WHERE reward_id = ? ORDER BY seq',
    ),
    report: db.prepare<[string], { day: string; state: LedgerState; count: number; sats: number; players: number }>(
      'SELECT day, state, count(*) AS count, sum(sats) AS sats, count(DISTINCT user_id) AS players FROM rewards WHERE day >= ? GROUP BY day, state ORDER BY day',
    ),
    recent: db
      .prepare<[string | null, string | null, string | null, string | null, number], RawRow>(
        `SELECT ${ROW_COLUMNS} FROM rewards WHERE (? IS NULL OR user_id = ?) AND (? IS NULL OR achievement_id = ?) ORDER BY seq DESC LIMIT ?`,
      )
      .raw(),
    reserved: db.prepare<[string, string], number>('SELECT sats FROM reserved WHERE scope = ? AND day = ?').pluck(),
    reserve: db.prepare<[string, string, number]>('INSERT INTO reserved (scope, day, sats) VALUES (?, ?, ?) ON CONFLICT (scope, day) DO UPDATE SET sats = sats + excluded.sats'),
    // The project's own total ('*') stays: budgetUsed() reads it for any day.
    pruneReserved: db.prepare<[string]>(
      `DELETE FROM reserved WHERE (scope, day) IN (SELECT scope, day FROM reserved WHERE day < ? AND scope <> '*' LIMIT ${PRUNE_CHUNK})`,
    ),
    pruneLinks: db.prepare<[string]>(
      `DELETE FROM address_links WHERE (address, day, user_id) IN (SELECT address, day, user_id FROM address_links WHERE day < ? LIMIT ${PRUNE_CHUNK})`,
    ),
    pruneNonces: db.prepare<[number]>(`DELETE FROM proof_nonces WHERE nonce IN (SELECT nonce FROM proof_nonces WHERE at < ? LIMIT ${PRUNE_CHUNK})`),
  };

  const one = (r: RawRow | undefined): Row | undefined => r && rowOf(r);
  const entries = (rows: RawRow[]) => rows.map((r) => toLedgerEntry(rowOf(r)));
  const reservedSats = (scope: string, day: string) => q.reserved.get(scope, day) ?? 0;
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
    const existing = one(q.byKey.get(c.userId, c.idempotencyKey));
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
        lastReservingAt: last,
        userSats: reservedSats(`u:${c.userId}`, day),
        projectSats: reservedSats('*', day),
        addressSats: c.address === undefined ? 0 : reservedSats(`a:${c.address}`, day),
        proofUsed,
      };
      reason = refusal(c, facts, limits, now);
    }
    const state = early ? 'deferred' : claimedState(reason, c);
    const address = c.address ?? null;
    if (existing) q.reclaim.run(state, reason ?? null, address, day, now, existing.id);
    else q.insert.run(c.id, c.userId, c.idempotencyKey, c.requestHash, c.achievementId, c.sats, state, reason ?? null, c.occurredAt ?? null, address, day, now);
    if (RESERVING_STATES.includes(state)) reserve(c.userId, address, day, c.sats);
    // The entry is the row as the statement left it (rest and spread copies of the claim cost
    // more than its statements did).
    const row: Row = existing ?? {
      id: c.id,
      user_id: c.userId,
      idempotency_key: c.idempotencyKey,
      request_hash: c.requestHash,
      achievement_id: c.achievementId,
      sats: c.sats,
      state,
      phase: 'claimed',
      reason: null,
      payment_id: null,
      gamertag: null,
      occurred_at: c.occurredAt ?? null,
      address,
      day,
      created_at: now,
      settled_at: null,
    };
    row.state = state;
    row.phase = 'claimed';
    row.reason = reason ?? null;
    row.address = address;
    row.day = day;
    row.created_at = now;
    const entry = toLedgerEntry(row);
    return { kind: 'created', entry, ...told(entry) };
  }

  function settleNow(id: string, from: readonly LedgerState[], to: Settlement, now: number, audit?: AuditNote): Settled | undefined {
    const row = one(q.byId.get(id));
    if (!row || !from.includes(row.state)) return undefined;
    if (audit) q.audit.run(id, audit.actor, audit.action, row.state, to.state, now);
    q.update.run(
      to.state,
      to.state,
      'reason' in to ? to.reason : null,
      'paymentId' in to ? (to.paymentId ?? null) : null,
      'gamertag' in to ? (to.gamertag ?? null) : null,
      to.state === 'paid' || to.state === 'failed' ? now : null,
      id,
    );
    // Leaving the reserving states frees the sats; coming back (a decision contradicted) takes them again.
    const reserving = RESERVING_STATES.includes(row.state);
    if (reserving !== RESERVING_STATES.includes(to.state)) reserve(row.user_id, row.address ?? null, row.day, reserving ? -row.sats : row.sats);
    // The entry is the row as the UPDATE left it.
    const was = row.state;
    row.state = to.state;
    if (to.state === 'sending') row.phase = 'claimed';
    row.reason = 'reason' in to ? to.reason : null;
    if ('paymentId' in to && to.paymentId !== undefined) row.payment_id = to.paymentId;
    if ('gamertag' in to && to.gamertag !== undefined) row.gamertag = to.gamertag;
    row.settled_at = to.state === 'paid' || to.state === 'failed' ? now : null;
    const entry = toLedgerEntry(row);
    return { entry, from: was, ...told(entry) };
  }

  return {
    find: async (userId, key) => {
      const r = one(q.byKey.get(userId, key));
      return r && toLedgerEntry(r);
    },
    claim: (c, limits, now) => write(() => claimNow(c, limits, now ?? Date.now())),
    settle: (id, from, to, options = {}) => write(() => settleNow(id, from, to, options.now ?? Date.now(), options.audit)),
    markSent: (id) => write(() => q.markSent.run(id).changes === 1),
    releaseUnsent: (id, now = Date.now()) =>
      write(() => (one(q.byId.get(id))?.phase === 'claimed' ? settleNow(id, ['sending'], { state: 'deferred', reason: 'interrupted_before_send' }, now) : undefined)),
    get: async (id) => {
      const r = one(q.byId.get(id));
      return r && toLedgerEntry(r);
    },
    history: async (userId, limit) => entries(q.history.all(userId, limit)),
    inState: async (state) => entries(q.inState.all(state)),
    budgetUsed: async (day) => reservedSats('*', day),
    linkAddress: (address, day, userId, max) =>
      write(() => {
        if (q.linked.get(address, day, userId)) return true;
        if (max > 0 && q.links.get(address, day)!.n >= max) return false;
        q.link.run(address, day, userId);
        return true;
      }),
    linkedPlayers: async (address, day) => q.linkedPlayers.all(address, day).map((r) => r.user_id),
    report: async (fromDay) => q.report.all(fromDay),
    recent: async ({ userId, achievementId }, limit) => entries(q.recent.all(userId ?? null, userId ?? null, achievementId ?? null, achievementId ?? null, limit)),
    // A chunk per write: the claims queued meanwhile go in between.
    prune: async (beforeDay, spentBefore) =>
      (await inChunks(() => write(() => q.pruneReserved.run(beforeDay).changes))) +
      (await inChunks(() => write(() => q.pruneLinks.run(beforeDay).changes))) +
      (await inChunks(() => write(() => q.pruneNonces.run(spentBefore).changes))),
    audits: async (id) => q.audits.all(id).map((a) => ({ rewardId: a.reward_id, actor: a.actor, action: a.action, fromState: a.from_state, toState: a.to_state, at: a.at })),
    // One process owns this file: whatever was sending before it started was abandoned.
    abandoned: async (_now, startedAt) => entries(q.inState.all('sending')).filter((e) => e.createdAt < startedAt),
    close: async () => undefined,
  };
}
