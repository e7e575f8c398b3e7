import { escapeLiteral, type Pool } from 'pg';
import { utcDay } from '../../../wire/earning-rules.js';
import {
  type AllowanceRaise,
  type BalanceFacts,
  type ClaimResult,
  type LedgerEntry,
  type NewWithdrawal,
  WITHDRAWAL_ACHIEVEMENT,
  type WithdrawalLimits,
  WithdrawalRefusal,
} from '../../core/ports/ledger.js';
import { withdrawalDecision } from '../../core/withdrawal-decision.js';
import { keyDecisionOf, RESERVING_SQL, toLedgerEntry } from '../ledger-row.js';
import { APPLY_SQL, type AppliedRow, applyParams, type Change, redecidedChange } from './apply.js';
import { eventOf, type Row } from './rows.js';
import { BEGIN, inTransaction } from './transaction.js';

/**
 * A player's balance ($1) on a day ($2), in one statement: credits, and withdrawals paid or under
 * way (all time, and that day's), by the balance's index (kind <> 'payout'); witnessed play; the
 * game server's raises.
 */
const FACTS = `SELECT
    coalesce(sum(r.sats) FILTER (WHERE r.kind = 'credit' AND r.state = 'credited'), 0) AS credited,
    coalesce(sum(r.sats) FILTER (WHERE r.kind = 'withdrawal' AND r.${RESERVING_SQL}), 0) AS withdrawn,
    coalesce(sum(r.sats) FILTER (WHERE r.kind = 'withdrawal' AND r.${RESERVING_SQL} AND r.day = $2), 0) AS today,
    (SELECT p.play_ms FROM play_time p WHERE p.user_id = $1) AS play_ms,
    (SELECT coalesce(sum(a.sats), 0) FROM allowance_raises a WHERE a.user_id = $1) AS raised
  FROM rewards r WHERE r.user_id = $1 AND r.kind <> 'payout'`;

interface FactsRow {
  credited: string | number;
  withdrawn: string | number;
  today: string | number;
  play_ms: string | number | null;
  raised: string | number;
}

const factsOf = (f: FactsRow): BalanceFacts => ({
  creditedSats: Number(f.credited),
  withdrawnSats: Number(f.withdrawn),
  withdrawnTodaySats: Number(f.today),
  playMs: Number(f.play_ms ?? 0),
  raisedSats: Number(f.raised),
});

/**
 * A heartbeat ($2) of a player ($1): the time since the last one counts when 0 < gap ≤ $3. One
 * statement, under the player's row lock (two beats of a player take turns); the last beat never
 * moves back.
 */
const BEAT = `INSERT INTO play_time AS p (user_id, play_ms, last_beat_at) VALUES ($1, 0, $2)
  ON CONFLICT (user_id) DO UPDATE SET
    play_ms = p.play_ms + CASE WHEN $2 - p.last_beat_at > 0 AND $2 - p.last_beat_at <= $3 THEN $2 - p.last_beat_at ELSE 0 END,
    last_beat_at = greatest(p.last_beat_at, $2)
  RETURNING play_ms`;

/**
 * Balance mode on PostgreSQL: a withdrawal debited under its player's lock (the one claims take),
 * so concurrent withdrawals, on any relay, never take more than the balance; the balance read in
 * one statement; witnessed play and the allowance's raises. `owner` and `leaseMs`: this relay's,
 * for the withdrawal's payment it goes on to send.
 */
export function pgBalances(pool: Pool, { owner, leaseMs }: { owner: string; leaseMs: number }) {
  /**
   * In one transaction: the player's lock (taken in the round trip that begins it), then, under
   * it, the key's entry and the balance's facts; decided (core/withdrawal-decision.ts) and written
   * through the write primitive. A known key, or a refusal, is rolled back: nothing was written.
   */
  async function withdraw(w: NewWithdrawal, limits: WithdrawalLimits, now = Date.now()): Promise<ClaimResult> {
    const day = utcDay(now);
    const begin = `${BEGIN}; SELECT pg_advisory_xact_lock(hashtextextended(${escapeLiteral(`u:${w.userId}`)}, 0))`;
    const r = await inTransaction<ClaimResult | WithdrawalRefusal>(
      pool,
      async (c) => {
        const { rows } = await c.query<FactsRow & { existing: Row | null }>(
          `SELECT (SELECT row_to_json(k) FROM rewards k WHERE k.user_id = $1 AND k.idempotency_key = $3) AS existing, f.* FROM (${FACTS}) f`,
          [w.userId, day, w.idempotencyKey],
        );
        const { existing, ...read } = rows[0]!;
        const key = keyDecisionOf(existing, w, true);
        if (key === 'existing') return { rollback: { kind: 'existing', entry: toLedgerEntry(existing!) } };
        const facts = factsOf(read);
        const decided = withdrawalDecision(w.sats, facts, limits);
        if ('refusal' in decided) return { rollback: new WithdrawalRefusal(decided.refusal, facts) };
        const state = decided.hold ? 'held' : 'sending';
        const sending = state === 'sending';
        const decidedRow = {
          kind: 'withdrawal',
          state,
          reason: null,
          sats: decided.sats,
          day,
          created: now,
          // Paid next: this relay owns its payment, under a lease (as a claim's).
          owner: sending ? owner : null,
          lease: sending ? now + leaseMs : null,
          budgeted: false,
          address: w.address ?? null,
          gamertag: w.gamertag ?? null,
          at: now,
        } as const;
        // A deferred key (nothing was paid) asked again: decided whole, as new, through the primitive.
        const change: Change =
          key === 'insert'
            ? {
                op: 'insert',
                id: w.id,
                user: w.userId,
                key: w.idempotencyKey,
                hash: w.requestHash,
                achievement: WITHDRAWAL_ACHIEVEMENT,
                occurred: null,
                ...decidedRow,
              }
            : redecidedChange(existing!.id, 'withdraw', decidedRow);
        const applied = (await c.query<AppliedRow>(APPLY_SQL, applyParams([change], true))).rows[0];
        // Under the player's lock nothing else moves a deferred entry (only a claim or a withdrawal
        // does, and pruning skips a player whose lock is taken): a lost compare-and-set is a defect.
        if (!applied?.entry) throw new Error(`withdrawal ${w.idempotencyKey}: its deferred entry moved under the player's lock`);
        return { kind: 'created', entry: toLedgerEntry(applied.entry), ...(applied.event ? { event: eventOf(applied.event) } : {}) };
      },
      begin,
    );
    if (r instanceof WithdrawalRefusal) throw r;
    return r;
  }

  return {
    withdraw,
    balance: async (userId: string, now = Date.now()): Promise<BalanceFacts> => factsOf((await pool.query<FactsRow>(FACTS, [userId, utcDay(now)])).rows[0]!),
    // By the balance's index (kind <> 'payout'): the player's withdrawals alone, not their rewards.
    withdrawals: async (userId: string, limit: number): Promise<LedgerEntry[]> =>
      (await pool.query<Row>(`SELECT * FROM rewards WHERE user_id = $1 AND kind = 'withdrawal' AND state <> 'deferred' ORDER BY seq DESC LIMIT $2`, [userId, limit])).rows.map(
        toLedgerEntry,
      ),
    beat: async (userId: string, now: number, maxGapMs: number): Promise<number> => Number((await pool.query<{ play_ms: string }>(BEAT, [userId, now, maxGapMs])).rows[0]!.play_ms),
    raiseAllowance: async (r: AllowanceRaise, now: number) => {
      const inserted = await pool.query('INSERT INTO allowance_raises (user_id, idempotency_key, sats, reason, at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING', [
        r.userId,
        r.idempotencyKey,
        r.sats,
        r.reason,
        now,
      ]);
      if (inserted.rowCount === 1) return { created: true, sats: r.sats, reason: r.reason };
      // Known: the raise its key recorded (read after the insert, so one committed meanwhile is seen).
      const known = (
        await pool.query<{ sats: number; reason: string }>('SELECT sats, reason FROM allowance_raises WHERE user_id = $1 AND idempotency_key = $2', [r.userId, r.idempotencyKey])
      ).rows[0]!;
      return { created: false, sats: Number(known.sats), reason: known.reason };
    },
  };
}
