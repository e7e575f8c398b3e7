import { utcDay } from '../../../wire/earning-rules.js';
import { claimedState, countsDollars, dayRefusal, factsRead, refusal, tooEarly } from '../../core/claim-decision.js';
import { type EntryKind, told as isTold, LIFECYCLE, type TransitionName } from '../../core/lifecycle.js';
import type { PlayerEvent } from '../../core/ports/event-log.js';
import {
  type AuditNote,
  type ClaimLimits,
  type ClaimResult,
  DayLimitRefusal,
  inChunks,
  type Ledger,
  type LedgerState,
  type NewClaim,
  PRUNE_CHUNK,
  REWARD_EVENT,
  type Settlement,
  type SettleOptions,
  type SettleResult,
} from '../../core/ports/ledger.js';
import { entryUsdMicros } from '../../core/price.js';
import { toRewardRecord } from '../../core/reward-record.js';
import { decideStreak, isStreak } from '../../core/streak.js';
import { PRIZE_KEY_PREFIX } from '../../core/tournament-decision.js';
import { keyDecisionOf, RESERVING_SQL, type LedgerRow as Row, reservesClaims, settledRow, toLedgerEntry } from '../ledger-row.js';
import { sqliteAddressLinks } from './address-links.js';
import { sqliteBalances } from './balance.js';
import type { SqliteDb } from './db.js';
import { eventAppender } from './event-log.js';
import { sqliteGuests } from './guests.js';
import { type RawRow, ROW_COLUMNS, rowOf } from './reward-rows.js';
import { rowUpdater, type Value } from './row-update.js';
import { sqliteStreaks } from './streaks.js';
import { sqliteTournaments } from './tournaments.js';

/** The ledger on an open, migrated database (which its owner closes). */
export function sqliteLedger(sqlite: SqliteDb): Ledger {
  const { db, write } = sqlite;
  const appendEvent = eventAppender(db);
  const lastStreakOf = sqliteStreaks(sqlite);

  const q = {
    byId: db.prepare<[string], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE id = ?`).raw(),
    byKey: db.prepare<[string, string], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE user_id = ? AND idempotency_key = ?`).raw(),
    lastReserving: db
      .prepare<[string, string], number>(`SELECT created_at FROM rewards WHERE user_id = ? AND achievement_id = ? AND ${RESERVING_SQL} ORDER BY created_at DESC LIMIT 1`)
      .pluck(),
    // The denial's time is its audit row's: the entry keeps its claim's time.
    lastDenied: db
      .prepare<[string, string], number | null>(
        `SELECT max(a.at) FROM rewards r JOIN audit a ON a.reward_id = r.id
         WHERE r.user_id = ? AND r.achievement_id = ? AND r.state = 'rejected' AND r.reason = 'denied_by_operator' AND a.to_state = 'rejected'`,
      )
      .pluck(),
    history: db.prepare<[string, number], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE user_id = ? ORDER BY seq DESC LIMIT ?`).raw(),
    earnedSince: db
      .prepare<[string, number, string | null, string | null, number], RawRow>(
        `SELECT ${ROW_COLUMNS} FROM rewards WHERE user_id = ? AND state IN ('paid', 'credited') AND kind <> 'withdrawal' AND created_at >= ?
         AND (? IS NULL OR achievement_id = ?) ORDER BY created_at, seq LIMIT ?`,
      )
      .raw(),
    inState: db.prepare<[string], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE state = ? ORDER BY created_at`).raw(),
    // Positional parameters: binding by name looks every name up afresh, at twice the cost.
    insert: db.prepare<
      [string, string, string, string, string, number, LedgerState, string | null, string | null, string | null, string | null, string, number, EntryKind, string | null]
    >(
      `INSERT INTO rewards (id, user_id, idempotency_key, request_hash, achievement_id, sats, state, phase, reason, gamertag, occurred_at, address, day, created_at, kind, terms)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'claimed', ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    spendNonce: db.prepare<[string, string, number]>('INSERT INTO proof_nonces (nonce, reward_id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING'),
    // The compare-and-set is in the statement: only an entry still sending and not yet sent moves.
    markSent: db.prepare<[string]>(`UPDATE rewards SET phase = 'sent' WHERE id = ? AND state = 'sending' AND phase = 'claimed'`),
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
    // The project's own totals ('*', and '$*' in micro-dollars) stay: budgetUsed() reads them for any day.
    pruneReserved: db.prepare<[string]>(
      `DELETE FROM reserved WHERE (scope, day) IN (SELECT scope, day FROM reserved WHERE day < ? AND scope NOT IN ('*', '$*') LIMIT ${PRUNE_CHUNK})`,
    ),
    pruneLinks: db.prepare<[string]>(
      `DELETE FROM address_links WHERE (address, day, user_id) IN (SELECT address, day, user_id FROM address_links WHERE day < ? LIMIT ${PRUNE_CHUNK})`,
    ),
    pruneNonces: db.prepare<[number]>(`DELETE FROM proof_nonces WHERE nonce IN (SELECT nonce FROM proof_nonces WHERE at < ? LIMIT ${PRUNE_CHUNK})`),
    // A deferred entry holds nothing; one an operator's decision touched keeps its audit trail's entry.
    // A deferred prize stays: no client claims it again, the relay's redelivery does (it is the prize's only record).
    pruneDeferred: db.prepare<[number]>(
      `DELETE FROM rewards WHERE seq IN (
         SELECT seq FROM rewards r WHERE state = 'deferred' AND created_at < ? AND idempotency_key NOT LIKE '${PRIZE_KEY_PREFIX}%'
           AND NOT EXISTS (SELECT 1 FROM audit a WHERE a.reward_id = r.id) LIMIT ${PRUNE_CHUNK})`,
    ),
  };

  const update = rowUpdater((set) => db.prepare<Value[]>(`UPDATE rewards SET ${set} WHERE id = ?`));
  const one = (r: RawRow | undefined): Row | undefined => r && rowOf(r);
  const entries = (rows: RawRow[]) => rows.map((r) => toLedgerEntry(rowOf(r)));
  const reservedSats = (scope: string, day: string) => q.reserved.get(scope, day) ?? 0;
  // Every entry with an address reserves under its scope too (counted with or without a cap, so
  // a release always undoes what was reserved).
  // An entry decided at a price also reserves its dollar value, in micro-dollars, under '$*' and
  // '$u:<userId>' (issue 38): what dollar budgets and caps read. `sign`: +1 to take, -1 to free.
  function reserve(r: Row, sign: 1 | -1) {
    q.reserve.run('*', r.day, sign * r.sats);
    q.reserve.run(`u:${r.user_id}`, r.day, sign * r.sats);
    if (r.address !== null) q.reserve.run(`a:${r.address}`, r.day, sign * r.sats);
    const micros = entryUsdMicros(r.terms);
    if (micros > 0) {
      q.reserve.run('$*', r.day, sign * micros);
      q.reserve.run(`$u:${r.user_id}`, r.day, sign * micros);
    }
  }
  /** The day's dollar value reserved by the player and the project, when a dollar limit reads them. */
  const usdFacts = (userId: string, day: string, limits: ClaimLimits | undefined) =>
    limits && countsDollars(limits) ? { userUsdMicros: reservedSats(`$u:${userId}`, day), projectUsdMicros: reservedSats('$*', day) } : {};

  /**
   * The one write primitive: an entry from `before` (none: a new key) to `after`, in the caller's
   * transaction. The row; its reservation (what `before` reserved is freed, exactly; what `after`
   * reserves is taken, on its day); the audit row of a decision by hand; and, for a state the
   * player sees, the player's `reward` event, built from the row as written.
   */
  function commit(before: Row | undefined, after: Row, at: number, audit?: AuditNote): PlayerEvent | undefined {
    const a = after;
    if (before) update(before, a);
    else {
      const created = Number(a.created_at);
      q.insert.run(
        a.id,
        a.user_id,
        a.idempotency_key,
        a.request_hash,
        a.achievement_id,
        a.sats,
        a.state,
        a.reason,
        a.gamertag,
        a.occurred_at,
        a.address,
        a.day,
        created,
        a.kind,
        a.terms === null ? null : JSON.stringify(a.terms),
      );
    }
    // A withdrawal's sats left the balance: they count on no cap or budget (its credits did).
    const was = before && reservesClaims(before) ? before : undefined;
    const is = reservesClaims(a) ? a : undefined;
    if (
      !was ||
      !is ||
      was.sats !== is.sats ||
      was.day !== is.day ||
      was.address !== is.address ||
      was.user_id !== is.user_id ||
      entryUsdMicros(was.terms) !== entryUsdMicros(is.terms)
    ) {
      if (was) reserve(was, -1);
      if (is) reserve(is, 1);
    }
    if (audit) q.audit.run(a.id, audit.actor, audit.action, before?.state ?? a.state, a.state, at);
    return isTold(a.state) ? appendEvent(a.user_id, REWARD_EVENT, toRewardRecord(toLedgerEntry(a))) : undefined;
  }

  function claimNow(claim: NewClaim, limits: ClaimLimits, now: number): ClaimResult {
    const existing = one(q.byKey.get(claim.userId, claim.idempotencyKey));
    const decision = keyDecisionOf(existing, claim, false);
    if (decision === 'existing') return { kind: 'existing', entry: toLedgerEntry(existing!) };
    const day = utcDay(now);
    // A claim is no earlier than the last reserving one of its achievement (a clock stepped back):
    // decided and dated at that one's time when its clock says sooner, as PostgreSQL decides it.
    let at = now;
    // A streak's day and sats, from its last reserving day (the same transaction).
    const streak = isStreak(claim) ? lastStreakOf(claim) : undefined;
    if (streak) at = Math.max(at, streak.at);
    const c = isStreak(claim) ? decideStreak(claim, streak, at) : claim;
    // The earning rules, on what this transaction reads (better-sqlite3 runs it alone).
    const early = tooEarly(c, now) !== undefined;
    let reason: string | undefined = early ? 'too_early' : undefined;
    if (!early) {
      // A proof is spent by any decided claim, whatever the decision: never twice.
      const proofUsed = c.proofNonce !== undefined && q.spendNonce.run(c.proofNonce, existing?.id ?? c.id, now).changes === 0;
      // Only what the rules in force read: each read is a statement in the store's one thread.
      const reads = factsRead(c, limits);
      const lastReservingAt = reads.lastReserving ? q.lastReserving.get(c.userId, c.achievementId) : undefined;
      if (lastReservingAt !== undefined) at = Math.max(at, lastReservingAt);
      const facts = {
        lastReservingAt,
        userSats: reads.userSats ? reservedSats(`u:${c.userId}`, day) : 0,
        projectSats: reads.projectSats ? reservedSats('*', day) : 0,
        addressSats: reads.addressSats ? reservedSats(`a:${c.address}`, day) : 0,
        ...usdFacts(c.userId, day, limits),
        proofUsed,
        lastDeniedAt: reads.lastDenied ? (q.lastDenied.get(c.userId, c.achievementId) ?? undefined) : undefined,
      };
      reason = refusal(c, facts, limits, at);
    }
    // Decided whole, a deferred key as a new one: today's price, day and address.
    const after: Row = {
      id: existing?.id ?? c.id,
      user_id: c.userId,
      idempotency_key: c.idempotencyKey,
      request_hash: c.requestHash,
      achievement_id: c.achievementId,
      sats: c.sats,
      state: early ? 'deferred' : claimedState(reason, c),
      phase: 'claimed',
      reason: reason ?? null,
      payment_id: null,
      gamertag: c.gamertag ?? null,
      occurred_at: existing ? existing.occurred_at : (c.occurredAt ?? null),
      address: c.address ?? null,
      day,
      created_at: at,
      settled_at: null,
      kind: c.credit ? 'credit' : 'payout',
      terms: c.terms ?? null,
    };
    const event = commit(existing, after, now);
    return { kind: 'created', entry: toLedgerEntry(after), ...(event ? { event } : {}) };
  }

  function settleNow(id: string, name: TransitionName, to: Settlement, now: number, { audit, limits }: SettleOptions): SettleResult | DayLimitRefusal {
    const t = LIFECYCLE[name];
    const row = one(q.byId.get(id));
    if (!row || !(t.from as readonly LedgerState[]).includes(row.state) || ('unsent' in t && row.phase !== 'claimed')) return undefined;
    let day = row.day;
    // Decided again on the day it happens: a held claim approved on a later day counts there, if it fits.
    if ('redecides' in t && reservesClaims({ state: to.state, kind: row.kind }) && row.day !== utcDay(now)) {
      day = utcDay(now);
      const refused =
        limits &&
        dayRefusal(
          { sats: row.sats, ...(row.address !== null ? { address: row.address } : {}), ...(row.terms ? { terms: row.terms } : {}) },
          {
            userSats: reservedSats(`u:${row.user_id}`, day),
            projectSats: reservedSats('*', day),
            addressSats: row.address === null ? 0 : reservedSats(`a:${row.address}`, day),
            ...usdFacts(row.user_id, day, limits),
          },
          limits,
        );
      if (refused) return new DayLimitRefusal(refused);
    }
    const after = settledRow(row, to, now, day);
    const event = commit(row, after, now, audit);
    return { entry: toLedgerEntry(after), from: row.state, ...(event ? { event } : {}) };
  }

  return {
    find: async (userId, key) => {
      const r = one(q.byKey.get(userId, key));
      return r && toLedgerEntry(r);
    },
    claim: (c, limits, now) => write(() => claimNow(c, limits, now ?? Date.now())),
    // A refusal is thrown outside the write: nothing was written, and the batch it was in goes on.
    settle: async (id, transition, to, options = {}) => {
      const r = await write(() => settleNow(id, transition, to, options.now ?? Date.now(), options));
      if (r instanceof DayLimitRefusal) throw r;
      return r;
    },
    markSent: (id) => write(() => q.markSent.run(id).changes === 1),
    get: async (id) => {
      const r = one(q.byId.get(id));
      return r && toLedgerEntry(r);
    },
    history: async (userId, limit) => entries(q.history.all(userId, limit)),
    earnedSince: async (userId, since, achievementId, limit) => entries(q.earnedSince.all(userId, since, achievementId ?? null, achievementId ?? null, limit)),
    inState: async (state) => entries(q.inState.all(state)),
    budgetUsed: async (day) => reservedSats('*', day),
    budgetUsedUsd: async (day) => reservedSats('$*', day) / 1_000_000,
    report: async (fromDay) => q.report.all(fromDay),
    recent: async ({ userId, achievementId }, limit) => entries(q.recent.all(userId ?? null, userId ?? null, achievementId ?? null, achievementId ?? null, limit)),
    // A chunk per write: the claims queued meanwhile go in between.
    prune: async (beforeDay, spentBefore, deferredBefore) =>
      (await inChunks(() => write(() => q.pruneReserved.run(beforeDay).changes))) +
      (await inChunks(() => write(() => q.pruneLinks.run(beforeDay).changes))) +
      (await inChunks(() => write(() => q.pruneNonces.run(spentBefore).changes))) +
      (await inChunks(() => write(() => q.pruneDeferred.run(deferredBefore).changes))),
    audits: async (id) => q.audits.all(id).map((a) => ({ rewardId: a.reward_id, actor: a.actor, action: a.action, fromState: a.from_state, toState: a.to_state, at: a.at })),
    // One process owns this file: whatever was sending before it started was abandoned.
    abandoned: async (_now, startedAt) => entries(q.inState.all('sending')).filter((e) => e.createdAt < startedAt),
    ...sqliteAddressLinks(sqlite),
    ...sqliteBalances(sqlite, { commit }),
    ...sqliteGuests(sqlite, { commit }),
    ...sqliteTournaments(sqlite, { commit, reservedSats }),
    close: async () => undefined,
  };
}
