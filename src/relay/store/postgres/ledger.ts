import type { Pool, PoolClient } from 'pg';
import { utcDay } from '../../../wire/earning-rules.js';
import { addressCapped, claimedState, keyDecision, refusal, tooEarly } from '../claim-decision.js';
import type { PlayerEvent } from '../event-log.js';
import { REWARD_EVENT, RESERVING_STATES, TOLD_STATES, type ClaimLimits, type ClaimResult, type AuditNote, type Ledger, type LedgerEntry, type LedgerState, type NewClaim, type Settled } from '../ledger.js';
import { RESERVING_SQL, toLedgerEntry, type LedgerRow } from '../ledger-row.js';
import { toRewardRecord } from '../reward-record.js';
import { appendEventIn } from './event-log.js';
import { inTransaction } from './transaction.js';

type Row = LedgerRow & { budgeted: boolean };

const RESERVING = RESERVING_STATES as readonly string[];


export interface PgLedgerOptions {
  /** This relay's name in the ledger: the owner of what it is sending. */
  owner: string;
  /** How long an owner's claim on a sending entry lasts: longer than any payment can take. */
  leaseMs: number;
  /** Tells every relay, after the commit, that this player has a new event (the event log's NOTIFY). */
  announce?: (userId: string) => void;
}

/**
 * The ledger on PostgreSQL, shared by any number of relays. A claim runs under the player's
 * advisory lock (and, with a budget, the day's budget row), so the rules are checked and the sats
 * reserved against what every relay has committed; each state change is a compare-and-set in its
 * statement.
 */
export function pgLedger(pool: Pool, { owner, leaseMs, announce }: PgLedgerOptions): Ledger {
  const transaction = <T>(work: (c: PoolClient) => Promise<T>) => inTransaction(pool, work);

  /** The player hears of the entry as it now stands, in the transaction that changed it. */
  const told = async (c: PoolClient, entry: LedgerEntry): Promise<{ event?: PlayerEvent }> =>
    TOLD_STATES.includes(entry.state) ? { event: await appendEventIn(c, entry.userId, REWARD_EVENT, toRewardRecord(entry)) } : {};
  /** After the commit: every relay's streams read the new event. */
  const heard = <T,>(r: T): T => {
    const event = r && typeof r === 'object' && 'event' in r ? (r.event as PlayerEvent | undefined) : undefined;
    if (event) announce?.(event.userId);
    return r;
  };

  async function settleIn(c: PoolClient, id: string, from: readonly LedgerState[], to: Parameters<Ledger['settle']>[2], now: number, audit?: AuditNote): Promise<Settled | undefined> {
    const { rows } = await c.query<Row & { old_state: LedgerState }>(
      `WITH old AS (SELECT id, state FROM rewards WHERE id = $1 AND state = ANY($2) FOR UPDATE)
       UPDATE rewards r SET state = $3, reason = $4, payment_id = coalesce($5, r.payment_id), gamertag = coalesce($6, r.gamertag), settled_at = $7,
         -- An approved held entry goes on as sending: this relay owns its payment, under a lease.
         phase = CASE WHEN $3 = 'sending' THEN 'claimed' ELSE r.phase END, owner = $8, lease_until = $9
       FROM old WHERE r.id = old.id RETURNING r.*, old.state AS old_state`,
      [
        id,
        from,
        to.state,
        'reason' in to ? to.reason : null,
        'paymentId' in to ? (to.paymentId ?? null) : null,
        'gamertag' in to ? (to.gamertag ?? null) : null,
        to.state === 'paid' || to.state === 'failed' ? now : null,
        to.state === 'sending' ? owner : null,
        to.state === 'sending' ? now + leaseMs : null,
      ],
    );
    const row = rows[0];
    if (!row) return undefined;
    if (audit) await c.query('INSERT INTO audit (reward_id, actor, action, from_state, to_state, at) VALUES ($1, $2, $3, $4, $5, $6)', [id, audit.actor, audit.action, row.old_state, to.state, now]);
    const reserved = RESERVING.includes(row.old_state);
    if (row.budgeted && reserved && !RESERVING.includes(to.state)) {
      await c.query('UPDATE budget SET sats = sats - $2 WHERE day = $1', [row.day, row.sats]);
      await c.query('UPDATE rewards SET budgeted = false WHERE id = $1', [row.id]);
    } else if (!reserved && RESERVING.includes(to.state)) {
      // A decision contradicted: its sats count against the day's budget again (where there is one).
      const counted = (await c.query('UPDATE budget SET sats = sats + $2 WHERE day = $1', [row.day, row.sats])).rowCount === 1;
      if (counted) await c.query('UPDATE rewards SET budgeted = true WHERE id = $1', [row.id]);
    }
    const entry = toLedgerEntry(row);
    return { entry, from: row.old_state, ...(await told(c, entry)) };
  }

  const one = async (sql: string, params: unknown[]) => (await pool.query<Row>(sql, params)).rows.map(toLedgerEntry);

  function claimOnce(claim: NewClaim, limits: ClaimLimits, at: number | undefined): Promise<ClaimResult> {
    return transaction(async (c): Promise<ClaimResult> => {
      // One claim at a time per player, across relays.
      await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`u:${claim.userId}`]);
      // The claim's time is taken once it holds the lock: a claim that waited is not earlier
      // than the one it waited for (a cooldown would count backwards).
      const now = at ?? Date.now();
      const existing = (await c.query<Row>('SELECT * FROM rewards WHERE user_id = $1 AND idempotency_key = $2', [claim.userId, claim.idempotencyKey])).rows[0];
      if (keyDecision(existing && { state: existing.state, requestHash: existing.request_hash }, claim) === 'existing') return { kind: 'existing', entry: toLedgerEntry(existing!) };
      const day = utcDay(now);
      // Witnessed play: too early decides nothing (deferred: no proof spent, nothing reserved).
      const early = tooEarly(claim, now) !== undefined;
      let reason: string | undefined = early ? 'too_early' : undefined;
      let budgeted = false;
      if (!early) {
        // The proof's nonce first, right after the player's lock (a claim waiting on another's
        // nonce holds no lock anyone else waits for). Its unique key is what makes it single-use.
        const proofUsed =
          claim.proofNonce !== undefined &&
          (await c.query('INSERT INTO proof_nonces (nonce, reward_id, at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [claim.proofNonce, existing?.id ?? claim.id, now])).rowCount === 0;
        // The states are spelled out, so the planner can use the partial index on them.
        const userSats =
          limits.userDailyCapSats > 0
            ? Number((await c.query<{ s: string }>(`SELECT coalesce(sum(sats), 0) AS s FROM rewards WHERE user_id = $1 AND day = $2 AND ${RESERVING_SQL}`, [claim.userId, day])).rows[0]!.s)
            : 0;
        // With an address cap, claims from one address take turns (across relays) at its lock.
        let addressSats = 0;
        if (addressCapped(claim, limits)) {
          await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`a:${claim.address}`]);
          addressSats = Number(
            (await c.query<{ s: string }>(`SELECT coalesce(sum(sats), 0) AS s FROM rewards WHERE address = $1 AND day = $2 AND ${RESERVING_SQL}`, [claim.address, day])).rows[0]!.s,
          );
        }
        // Only with a budget do claims from every relay take turns, at the day's budget row.
        budgeted = limits.dailyBudgetSats > 0;
        let projectSats = 0;
        if (budgeted) {
          await c.query('INSERT INTO budget (day, sats) VALUES ($1, 0) ON CONFLICT DO NOTHING', [day]);
          projectSats = Number((await c.query<{ sats: string }>('SELECT sats FROM budget WHERE day = $1 FOR UPDATE', [day])).rows[0]!.sats);
        }
        const last = (
          await c.query<{ created_at: string }>(
            `SELECT created_at FROM rewards WHERE user_id = $1 AND achievement_id = $2 AND ${RESERVING_SQL} ORDER BY created_at DESC LIMIT 1`,
            [claim.userId, claim.achievementId],
          )
        ).rows[0];
        reason = refusal(claim, { lastReservingAt: last && Number(last.created_at), userSats, projectSats, addressSats, proofUsed }, limits, now);
      }
      const state = early ? 'deferred' : claimedState(reason, claim);
      const reserving = RESERVING.includes(state);
      const lease = state === 'sending' ? now + leaseMs : null;
      budgeted &&= reserving;
      const row = existing
        ? (
            await c.query<Row>(
              `UPDATE rewards SET state = $2, phase = 'claimed', reason = $3, day = $4, created_at = $5, owner = $6, lease_until = $7, budgeted = $8, address = $9 WHERE id = $1 RETURNING *`,
              [existing.id, state, reason ?? null, day, now, lease === null ? null : owner, lease, budgeted, claim.address ?? null],
            )
          ).rows[0]!
        : (
            await c.query<Row>(
              `INSERT INTO rewards (id, user_id, idempotency_key, request_hash, achievement_id, sats, state, phase, reason, occurred_at, day, created_at, owner, lease_until, budgeted, address)
               VALUES ($1, $2, $3, $4, $5, $6, $7, 'claimed', $8, $9, $10, $11, $12, $13, $14, $15) RETURNING *`,
              [claim.id, claim.userId, claim.idempotencyKey, claim.requestHash, claim.achievementId, claim.sats, state, reason ?? null, claim.occurredAt ?? null, day, now, lease === null ? null : owner, lease, budgeted, claim.address ?? null],
            )
          ).rows[0]!;
      if (budgeted) await c.query('UPDATE budget SET sats = sats + $2 WHERE day = $1', [day, claim.sats]);
      const entry = toLedgerEntry(row);
      return { kind: 'created', entry, ...(await told(c, entry)) };
    }).then(heard);
  }

  return {
    find: async (userId, key) => (await one('SELECT * FROM rewards WHERE user_id = $1 AND idempotency_key = $2', [userId, key]))[0],
    claim: (claim, limits, at) =>
      claimOnce(claim, limits, at).catch(async (err: { code?: string }) => {
        // The key's row was made meanwhile (the player's lock makes this rare): it is the answer.
        const existing = err.code === '23505' ? await one('SELECT * FROM rewards WHERE user_id = $1 AND idempotency_key = $2', [claim.userId, claim.idempotencyKey]) : [];
        if (existing[0]) return { kind: 'existing', entry: existing[0] } satisfies ClaimResult;
        throw err;
      }),
    settle: (id, from, to, options = {}) => transaction((c) => settleIn(c, id, from, to, options.now ?? Date.now(), options.audit)).then(heard),
    markSent: async (id) => (await pool.query(`UPDATE rewards SET phase = 'sent' WHERE id = $1 AND state = 'sending' AND phase = 'claimed'`, [id])).rowCount === 1,
    releaseUnsent: (id, now = Date.now()) =>
      transaction(async (c) => {
        const claimed = (await c.query(`SELECT 1 FROM rewards WHERE id = $1 AND state = 'sending' AND phase = 'claimed' FOR UPDATE`, [id])).rowCount === 1;
        return claimed ? settleIn(c, id, ['sending'], { state: 'deferred', reason: 'interrupted_before_send' }, now) : undefined;
      }).then(heard),
    get: async (id) => (await one('SELECT * FROM rewards WHERE id = $1', [id]))[0],
    history: (userId, limit) => one('SELECT * FROM rewards WHERE user_id = $1 ORDER BY seq DESC LIMIT $2', [userId, limit]),
    inState: (state) => one('SELECT * FROM rewards WHERE state = $1 ORDER BY created_at', [state]),
    linkAddress: (address, day, userId, max) =>
      transaction(async (c) => {
        // One link at a time per address and day, across relays.
        await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`l:${address}:${day}`]);
        if ((await c.query('SELECT 1 FROM address_links WHERE address = $1 AND day = $2 AND user_id = $3', [address, day, userId])).rowCount) return true;
        if (max > 0 && Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM address_links WHERE address = $1 AND day = $2', [address, day])).rows[0]!.n) >= max) return false;
        await c.query('INSERT INTO address_links (address, day, user_id) VALUES ($1, $2, $3)', [address, day, userId]);
        return true;
      }),
    budgetUsed: async (day) => Number((await pool.query<{ s: string }>(`SELECT coalesce(sum(sats), 0) AS s FROM rewards WHERE day = $1 AND ${RESERVING_SQL}`, [day])).rows[0]!.s),
    report: async (fromDay) =>
      (
        await pool.query<{ day: string; state: LedgerState; count: string; sats: string; players: string }>(
          'SELECT day, state, count(*) AS count, sum(sats) AS sats, count(DISTINCT user_id) AS players FROM rewards WHERE day >= $1 GROUP BY day, state ORDER BY day',
          [fromDay],
        )
      ).rows.map((r) => ({ day: r.day, state: r.state, count: Number(r.count), sats: Number(r.sats), players: Number(r.players) })),
    recent: ({ userId, achievementId }, limit) =>
      one('SELECT * FROM rewards WHERE ($1::text IS NULL OR user_id = $1) AND ($2::text IS NULL OR achievement_id = $2) ORDER BY seq DESC LIMIT $3', [userId ?? null, achievementId ?? null, limit]),
    audits: async (id) =>
      (
        await pool.query<{ reward_id: string; actor: string; action: string; from_state: LedgerState; to_state: LedgerState; at: string }>('SELECT * FROM audit WHERE reward_id = $1 ORDER BY seq', [id])
      ).rows.map((a) => ({ rewardId: a.reward_id, actor: a.actor, action: a.action, fromState: a.from_state, toState: a.to_state, at: Number(a.at) })),
    // Another relay's payment in flight keeps its lease; only a lapsed one was abandoned.
    abandoned: (now) => one(`SELECT * FROM rewards WHERE state = 'sending' AND lease_until < $1 ORDER BY created_at`, [now]),
    close: async () => undefined,
  };
}
