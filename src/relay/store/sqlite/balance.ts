import { utcDay } from '../../../wire/earning-rules.js';
import type { PlayerEvent } from '../../core/ports/event-log.js';
import { type BalanceFacts, type ClaimResult, type Ledger, type NewWithdrawal, WITHDRAWAL_ACHIEVEMENT, type WithdrawalLimits, WithdrawalRefusal } from '../../core/ports/ledger.js';
import { withdrawalDecision } from '../../core/withdrawal-decision.js';
import { keyDecisionOf, RESERVING_SQL, type LedgerRow as Row, toLedgerEntry } from '../ledger-row.js';
import type { SqliteDb } from './db.js';
import { type RawRow, ROW_COLUMNS, rowOf } from './reward-rows.js';

/** What the ledger lends balance mode: its one write primitive (a withdrawal is an entry like any other). */
export interface SqliteBalanceParts {
  commit(before: Row | undefined, after: Row, at: number): PlayerEvent | undefined;
}

/**
 * Balance mode on SQLite: a player's balance (credits less withdrawals), witnessed play, allowance
 * raises, and withdrawals decided on them (core/withdrawal-decision.ts, as PostgreSQL decides)
 * and written through the ledger's one write primitive, in the store's one thread.
 */
export function sqliteBalances(
  { db, write }: SqliteDb,
  { commit }: SqliteBalanceParts,
): Required<Pick<Ledger, 'withdraw' | 'balance' | 'withdrawals' | 'beat' | 'balancesOwed' | 'raiseAllowance'>> {
  const q = {
    byKey: db.prepare<[string, string], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE user_id = ? AND idempotency_key = ?`).raw(),
    // A player's balance: credits, and withdrawals paid or under way (all time, and today's).
    balance: db.prepare<[string, string], { credited: number; withdrawn: number; today: number }>(
      `SELECT coalesce(sum(CASE WHEN kind = 'credit' AND state = 'credited' THEN sats END), 0) AS credited,
              coalesce(sum(CASE WHEN kind = 'withdrawal' AND ${RESERVING_SQL} THEN sats END), 0) AS withdrawn,
              coalesce(sum(CASE WHEN kind = 'withdrawal' AND ${RESERVING_SQL} AND day = ? THEN sats END), 0) AS today
       FROM rewards WHERE user_id = ? AND kind <> 'payout'`,
    ),
    // By the balance's index (kind <> 'payout'): the player's withdrawals alone, not their rewards.
    withdrawals: db
      .prepare<[string, number], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE user_id = ? AND kind = 'withdrawal' AND state <> 'deferred' ORDER BY seq DESC LIMIT ?`)
      .raw(),
    play: db.prepare<[string], { play_ms: number; last_beat_at: number }>('SELECT play_ms, last_beat_at FROM play_time WHERE user_id = ?'),
    beat: db.prepare<[string, number, number]>(
      'INSERT INTO play_time (user_id, play_ms, last_beat_at) VALUES (?, ?, ?)' +
        ' ON CONFLICT (user_id) DO UPDATE SET play_ms = excluded.play_ms, last_beat_at = excluded.last_beat_at',
    ),
    raised: db.prepare<[string], number>('SELECT coalesce(sum(sats), 0) FROM allowance_raises WHERE user_id = ?').pluck(),
    raise: db.prepare<[string, string, number, string, number]>(
      'INSERT INTO allowance_raises (user_id, idempotency_key, sats, reason, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
    ),
    raisedUnder: db.prepare<[string, string], { sats: number; reason: string }>('SELECT sats, reason FROM allowance_raises WHERE user_id = ? AND idempotency_key = ?'),
    owed: db
      .prepare<[], number>(
        `SELECT coalesce(sum(CASE WHEN kind = 'credit' THEN sats ELSE -sats END), 0) FROM rewards
         WHERE (kind = 'credit' AND state = 'credited') OR (kind = 'withdrawal' AND ${RESERVING_SQL})`,
      )
      .pluck(),
  };

  function balanceFacts(userId: string, now: number): BalanceFacts {
    const b = q.balance.get(utcDay(now), userId)!;
    return { creditedSats: b.credited, withdrawnSats: b.withdrawn, withdrawnTodaySats: b.today, playMs: q.play.get(userId)?.play_ms ?? 0, raisedSats: q.raised.get(userId) ?? 0 };
  }

  function withdrawNow(w: NewWithdrawal, limits: WithdrawalLimits, now: number): ClaimResult | WithdrawalRefusal {
    const raw = q.byKey.get(w.userId, w.idempotencyKey);
    const existing = raw && rowOf(raw);
    const decision = keyDecisionOf(existing, w, true);
    if (decision === 'existing') return { kind: 'existing', entry: toLedgerEntry(existing!) };
    const facts = balanceFacts(w.userId, now);
    const decided = withdrawalDecision(w.sats, facts, limits);
    if ('refusal' in decided) return new WithdrawalRefusal(decided.refusal, facts);
    const after: Row = {
      id: existing?.id ?? w.id,
      user_id: w.userId,
      idempotency_key: w.idempotencyKey,
      request_hash: w.requestHash,
      achievement_id: WITHDRAWAL_ACHIEVEMENT,
      sats: decided.sats,
      state: decided.hold ? 'held' : 'sending',
      phase: 'claimed',
      reason: null,
      payment_id: null,
      gamertag: w.gamertag ?? null,
      occurred_at: null,
      address: w.address ?? null,
      day: utcDay(now),
      created_at: now,
      settled_at: null,
      kind: 'withdrawal',
      terms: null,
    };
    const event = commit(existing, after, now);
    return { kind: 'created', entry: toLedgerEntry(after), ...(event ? { event } : {}) };
  }

  return {
    withdraw: async (w, limits, now) => {
      const r = await write(() => withdrawNow(w, limits, now ?? Date.now()));
      if (r instanceof WithdrawalRefusal) throw r;
      return r;
    },
    balance: async (userId, now) => balanceFacts(userId, now ?? Date.now()),
    withdrawals: async (userId, limit) => q.withdrawals.all(userId, limit).map((r) => toLedgerEntry(rowOf(r))),
    beat: (userId, now, maxGapMs) =>
      write(() => {
        const last = q.play.get(userId);
        const gap = last ? now - last.last_beat_at : Number.POSITIVE_INFINITY;
        const playMs = (last?.play_ms ?? 0) + (gap > 0 && gap <= maxGapMs ? gap : 0);
        q.beat.run(userId, playMs, Math.max(now, last?.last_beat_at ?? now));
        return playMs;
      }),
    balancesOwed: async () => q.owed.get() ?? 0,
    raiseAllowance: (r, now) =>
      write(() =>
        q.raise.run(r.userId, r.idempotencyKey, r.sats, r.reason, now).changes === 1
          ? { created: true, sats: r.sats, reason: r.reason }
          : { created: false, ...q.raisedUnder.get(r.userId, r.idempotencyKey)! },
      ),
  };
}
