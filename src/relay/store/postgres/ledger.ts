import type { Pool, PoolClient } from 'pg';
import { utcDay } from '../../../wire/earning-rules.js';
import { dayRefusal } from '../../core/claim-decision.js';
import { LIFECYCLE, RESERVING_STATES, type TransitionName } from '../../core/lifecycle.js';
import type { PlayerEvent } from '../../core/ports/event-log.js';
import { DayLimitRefusal, type Ledger, type LedgerState, PRUNE_CHUNK, type Settlement, type SettleOptions, type SettleResult } from '../../core/ports/ledger.js';
import { PRIZE_KEY_PREFIX } from '../../core/tournament-decision.js';
import { RESERVING_SQL, toLedgerEntry } from '../ledger-row.js';
import { APPLY_SQL, type AppliedRow, applyParams, settledOf, settlementChange } from './apply.js';
import { pgBalances } from './balance.js';
import { pgClaims } from './claims.js';
import { pgGuests } from './guests.js';
import { pruneInChunks } from './prune.js';
import type { Row } from './rows.js';
import { pgSettlements } from './settlements.js';
import { pgTournaments } from './tournaments.js';
import { inTransaction } from './transaction.js';

export interface PgLedgerOptions {
  /** This relay's name in the ledger: the owner of what it is sending. */
  owner: string;
  /** How long an owner's claim on a sending entry lasts: longer than any payment can take. */
  leaseMs: number;
  /** Tells every relay, after the commit, that this player has a new event (the event log's NOTIFY). */
  announce?: (userId: string) => void;
  /**
   * Where grouped writes go (recovery points, settlements): connections of their own, so a group
   * never queues behind the claims holding the main pool's. Default: the main pool.
   */
  groups?: Pool;
}

/**
 * Deferred entries last claimed before $1: they hold nothing. Only of players whose lock is free
 * (a claim holding it may be deciding that very key again), and checked again as each row is
 * deleted; an entry an operator's decision touched keeps its audit trail's entry. A deferred
 * prize stays: no client claims it again, the relay's redelivery does (it is the prize's only record).
 */
const PRUNE_DEFERRED = `DELETE FROM rewards WHERE id IN (
    SELECT r.id FROM rewards r WHERE r.state = 'deferred' AND r.created_at < $1 AND r.idempotency_key NOT LIKE '${PRIZE_KEY_PREFIX}%'
      AND NOT EXISTS (SELECT 1 FROM audit a WHERE a.reward_id = r.id)
      AND pg_try_advisory_xact_lock(hashtextextended('u:' || r.user_id, 0)) LIMIT ${PRUNE_CHUNK})
  AND state = 'deferred' AND created_at < $1`;

/** An entry redecide read moved to another player (a guest's merge) before it took the player's lock. */
const MERGED_MEANWHILE = Symbol('merged meanwhile');

/**
 * The ledger on PostgreSQL, shared by any number of relays: claims (store/postgres/claims.ts) and
 * settlements (store/postgres/settlements.ts), each state change a compare-and-set, and what the
 * relay and its operator read.
 */
export function pgLedger(pool: Pool, { owner, leaseMs, announce, groups = pool }: PgLedgerOptions): Ledger {
  const transaction = <T>(work: (c: PoolClient) => Promise<T>) => inTransaction(pool, work);
  const claim = pgClaims(pool, { owner, leaseMs });
  const settlements = pgSettlements(pool, groups, { owner, leaseMs });
  const balances = pgBalances(pool, { owner, leaseMs });
  const guests = pgGuests(pool);
  const tournaments = pgTournaments(pool, { owner, leaseMs });

  /** After the commit: every relay's streams read the new event. */
  const heard = <T>(r: T): T => {
    const event = r && typeof r === 'object' && 'event' in r ? (r.event as PlayerEvent | undefined) : undefined;
    if (event) announce?.(event.userId);
    return r;
  };

  const one = async (sql: string, params: unknown[]) => (await pool.query<Row>(sql, params)).rows.map(toLedgerEntry);

  /**
   * A transition that decides again (an approval) of an entry reserved on an earlier UTC day:
   * under its player's lock (and its address's) and both days' budget rows, today's cap, budget
   * and address cap are read as a claim reads them; with room, the entry moves to today, its
   * reservation with it; without, nothing changes. 'same_day': nothing to decide again (nor for a withdrawal).
   */
  async function redecide(id: string, name: TransitionName, to: Settlement, now: number, { audit, limits }: SettleOptions): Promise<SettleResult | 'same_day'> {
    const day = utcDay(now);
    const row = (await pool.query<Row>('SELECT * FROM rewards WHERE id = $1', [id])).rows[0];
    // A withdrawal counts on no cap or budget: its day is the one it was asked on.
    if (!row || row.day === day || row.kind === 'withdrawal') return 'same_day';
    const budgeted = (limits?.dailyBudgetSats ?? 0) > 0 || (limits?.dailyBudgetUsd ?? 0) > 0;
    const capped = row.address !== null && (limits?.addressDailyCapSats ?? 0) > 0;
    const r = await inTransaction<SettleResult | typeof MERGED_MEANWHILE>(pool, async (c) => {
      // Budget rows in day order, as every writer takes them: the entry's own day first.
      await c.query('SELECT 1 FROM budget WHERE day = $1 FOR UPDATE', [row.day]);
      const { rows } = await c.query<{
        user_sats: string;
        address_sats: string;
        project_sats: string | null;
        user_usd_micros: string;
        project_usd_micros: string | null;
      }>('SELECT * FROM rewardbus_claim_facts($1, $2, $3, $4, NULL, $5, $6, $7, $8, $9, $10)', [
        row.user_id,
        row.idempotency_key,
        day,
        row.achievement_id,
        row.id,
        now,
        budgeted,
        (limits?.userDailyCapSats ?? 0) > 0 || (limits?.userDailyCapUsd ?? 0) > 0,
        capped ? row.address : null,
        capped ? row.address : null,
      ]);
      const facts = rows[0]!;
      // The entry was read before its player's lock was taken: a guest's credit merged meanwhile
      // (a merge takes the guest's lock, held from here on) is decided again, as its player's, once.
      const current = (await c.query<{ user_id: string }>('SELECT user_id FROM rewards WHERE id = $1', [id])).rows[0];
      if (current && current.user_id !== row.user_id) return { rollback: MERGED_MEANWHILE };
      const refused =
        limits &&
        dayRefusal(
          { sats: row.sats, ...(row.address !== null ? { address: row.address } : {}), ...(row.terms ? { terms: row.terms } : {}) },
          {
            userSats: Number(facts.user_sats),
            projectSats: Number(facts.project_sats ?? 0),
            addressSats: Number(facts.address_sats),
            userUsdMicros: Number(facts.user_usd_micros),
            projectUsdMicros: Number(facts.project_usd_micros ?? 0),
          },
          limits,
        );
      if (refused) throw new DayLimitRefusal(refused);
      const change = settlementChange(id, name, to, now, { owner, leaseMs }, audit, { day, budgeted });
      const applied = await c.query<AppliedRow>(APPLY_SQL, applyParams([change], true));
      return settledOf(applied.rows[0]);
    });
    return r === MERGED_MEANWHILE ? redecide(id, name, to, now, { audit, limits }) : r;
  }

  return {
    find: async (userId, key) => (await one('SELECT * FROM rewards WHERE user_id = $1 AND idempotency_key = $2', [userId, key]))[0],
    claim: (c, limits, at) => claim(c, limits, at).then(heard),
    settle: async (id, transition, to, options = {}) => {
      const now = options.now ?? Date.now();
      // Decided again on the day it happens (an approval): on a later day than the entry's, in a transaction of its own.
      if ('redecides' in LIFECYCLE[transition] && RESERVING_STATES.includes(to.state)) {
        const moved = await redecide(id, transition, to, now, options);
        if (moved !== 'same_day') return heard(moved);
      }
      return heard(await settlements.settle(id, transition, to, now, options.audit));
    },
    markSent: settlements.markSent,
    get: async (id) => (await one('SELECT * FROM rewards WHERE id = $1', [id]))[0],
    history: (userId, limit) => one('SELECT * FROM rewards WHERE user_id = $1 ORDER BY seq DESC LIMIT $2', [userId, limit]),
    earnedSince: (userId, since, achievementId, limit) =>
      one(
        `SELECT * FROM rewards WHERE user_id = $1 AND state IN ('paid', 'credited') AND kind <> 'withdrawal' AND created_at >= $2
         AND ($3::text IS NULL OR achievement_id = $3) ORDER BY created_at, seq LIMIT $4`,
        [userId, since, achievementId ?? null, limit],
      ),
    inState: (state) => one('SELECT * FROM rewards WHERE state = $1 ORDER BY created_at', [state]),
    linkAddress: (address, day, userId, max) =>
      transaction(async (c) => {
        // One link at a time per address and day, across relays.
        await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`l:${address}:${day}`]);
        if ((await c.query('SELECT 1 FROM address_links WHERE address = $1 AND day = $2 AND user_id = $3', [address, day, userId])).rowCount) return true;
        if (max > 0 && Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM address_links WHERE address = $1 AND day = $2', [address, day])).rows[0]!.n) >= max)
          return false;
        await c.query('INSERT INTO address_links (address, day, user_id) VALUES ($1, $2, $3)', [address, day, userId]);
        return true;
      }),
    linkedPlayers: async (address, day) =>
      (await pool.query<{ user_id: string }>('SELECT user_id FROM address_links WHERE address = $1 AND day = $2', [address, day])).rows.map((r) => r.user_id),
    budgetUsed: async (day) =>
      Number((await pool.query<{ s: string }>(`SELECT coalesce(sum(sats), 0) AS s FROM rewards WHERE day = $1 AND ${RESERVING_SQL} AND kind <> 'withdrawal'`, [day])).rows[0]!.s),
    budgetUsedUsd: async (day) =>
      Number(
        (
          await pool.query<{ s: string }>(`SELECT coalesce(sum(rewardbus_usd_micros(terms)), 0) AS s FROM rewards WHERE day = $1 AND ${RESERVING_SQL} AND kind <> 'withdrawal'`, [
            day,
          ])
        ).rows[0]!.s,
      ) / 1_000_000,
    report: async (fromDay) =>
      (
        await pool.query<{ day: string; state: LedgerState; count: string; sats: string; players: string }>(
          'SELECT day, state, count(*) AS count, sum(sats) AS sats, count(DISTINCT user_id) AS players FROM rewards WHERE day >= $1 GROUP BY day, state ORDER BY day',
          [fromDay],
        )
      ).rows.map((r) => ({ day: r.day, state: r.state, count: Number(r.count), sats: Number(r.sats), players: Number(r.players) })),
    recent: ({ userId, achievementId }, limit) =>
      one('SELECT * FROM rewards WHERE ($1::text IS NULL OR user_id = $1) AND ($2::text IS NULL OR achievement_id = $2) ORDER BY seq DESC LIMIT $3', [
        userId ?? null,
        achievementId ?? null,
        limit,
      ]),
    audits: async (id) =>
      (
        await pool.query<{ reward_id: string; actor: string; action: string; from_state: LedgerState; to_state: LedgerState; at: string }>(
          'SELECT * FROM audit WHERE reward_id = $1 ORDER BY seq',
          [id],
        )
      ).rows.map((a) => ({ rewardId: a.reward_id, actor: a.actor, action: a.action, fromState: a.from_state, toState: a.to_state, at: Number(a.at) })),
    // Reservations are sums over the day's entries here: only the links and the nonces to forget.
    prune: async (beforeDay, spentBefore, deferredBefore) => {
      const chunks = (text: string, before: string | number) => pruneInChunks(pool, text, before);
      return (
        (await chunks(
          `DELETE FROM address_links WHERE (address, day, user_id) IN (SELECT address, day, user_id FROM address_links WHERE day < $1 LIMIT ${PRUNE_CHUNK})`,
          beforeDay,
        )) +
        (await chunks(`DELETE FROM proof_nonces WHERE nonce IN (SELECT nonce FROM proof_nonces WHERE at < $1 LIMIT ${PRUNE_CHUNK})`, spentBefore)) +
        (await chunks(PRUNE_DEFERRED, deferredBefore))
      );
    },
    // Another relay's payment in flight keeps its lease; only a lapsed one was abandoned.
    abandoned: (now) => one(`SELECT * FROM rewards WHERE state = 'sending' AND lease_until < $1 ORDER BY created_at`, [now]),
    withdraw: (w, limits, now) => balances.withdraw(w, limits, now).then(heard),
    balance: balances.balance,
    withdrawals: balances.withdrawals,
    beat: balances.beat,
    raiseAllowance: balances.raiseAllowance,
    mergeGuest: async (guestId, userId, rules, audit, now) => {
      const r = await guests.mergeGuest(guestId, userId, rules, audit, now);
      for (const s of [...r.moved, ...r.dropped]) heard(s);
      return r;
    },
    mergedInto: guests.mergedInto,
    balancesOwed: guests.balancesOwed,
    ...tournaments,
    postTournament: async (post, limits, now) => {
      const r = await tournaments.postTournament(post, limits, now);
      if (r.kind === 'created') for (const p of r.prizes) heard(p);
      return r;
    },
    close: async () => undefined,
  };
}
