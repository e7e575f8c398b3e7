import type { Logger } from 'pino';
import type { RewardRecord } from '../../wire/relay-api.js';
import { allows, LIFECYCLE, LifecycleError, type TransitionName, told, transition } from './lifecycle.js';
import type { PlayerEvent } from './ports/event-log.js';
import {
  type AuditNote,
  type ClaimLimits,
  type ClaimResult,
  type DayLimit,
  DayLimitRefusal,
  type GuestMerge,
  type Ledger,
  type LedgerEntry,
  type LedgerState,
  type MergeRules,
  type NewClaim,
  type NewWithdrawal,
  type Settled,
  type Settlement,
  type TournamentPost,
  type TournamentPostResult,
  type WithdrawalLimits,
} from './ports/ledger.js';
import { toRewardRecord } from './reward-record.js';

/** What moved an intent: the claim, the payment's answer, or one of the ways a review ends. */
export type SettlementCause = 'claim' | 'payout' | 'late_answer' | 'reconcile' | 'recovery' | 'operator' | 'merge';

/** The metrics a settlement records (ops/metrics.ts; a no-op without the operator's surface). */
export interface SettlementMetrics {
  settled(state: LedgerState, achievementId: string, sats: number, sinceMs?: number, kind?: LedgerEntry['kind']): void;
  /** The service's answer disagreed with a final decision (see payouts' late answers). */
  contradicted?(): void;
}

export interface SettlementsDeps {
  ledger: Ledger;
  /** Live delivery to this relay's streams; a shared log delivers through its own subscription. */
  publish: (event: PlayerEvent) => void;
  metrics: SettlementMetrics;
  logger: Logger;
  /**
   * The core's clock, for every change it applies. Claims take it too when it is given (a test's
   * controlled clock); by default a claim's time is the store's, taken under its locks.
   */
  clock?: () => number;
  /** Told after the commit of each entry that reached paid or credited (the referral programs' qualification); absent: nothing runs. */
  onFinal?: ((entry: LedgerEntry) => void) | undefined;
}

export interface SettleRequest {
  /** The lifecycle's transition (core/lifecycle.ts): the states it leaves, and those `to` may be. */
  transition: TransitionName;
  to: Settlement;
  cause: SettlementCause;
  /** A decision by hand: audited with who and how, in the settlement's transaction. */
  audit?: AuditNote;
  /** For a transition that decides again (approve): the limits of the day it happens on. */
  limits?: ClaimLimits;
  now?: number;
}

/** How a settlement went: committed, refused by the day's limits (nothing changed), or the entry had moved on. */
export type SettleOutcome = { kind: 'settled'; entry: LedgerEntry } | { kind: 'refused'; reason: DayLimit } | { kind: 'stale' };

/**
 * The one path by which an intent changes state. Each change is one store transaction (the ledger
 * row, the audit row for decisions by hand, the player's `reward` event); after its commit, and
 * only from what was committed, the event is published to live streams, the metrics recorded
 * and the change logged. Nothing else in the relay settles an entry or appends a reward event.
 */
export function createSettlements({ ledger, publish, metrics, logger, clock, onFinal }: SettlementsDeps) {
  /**
   * The last entry told and the record it was told with (its event's): a claim's answer, made a few
   * microtasks after its settlement, sends the same record rather than build it again. One slot, by
   * identity: another settlement in between only means the record is built (a WeakMap of every
   * entry cost more than the record).
   */
  let lastTold: { entry: LedgerEntry; record: RewardRecord } | undefined;

  function after(s: Settled, cause: SettlementCause, audit?: AuditNote) {
    const { entry, from, event } = s;
    if (event) {
      publish(event);
      if (event.type === 'reward') lastTold = { entry, record: event.data as RewardRecord };
    }
    if (onFinal && (entry.state === 'paid' || entry.state === 'credited')) onFinal(entry);
    if (entry.state !== 'sending' && entry.state !== 'deferred' && entry.state !== 'held')
      metrics.settled(entry.state, entry.achievementId, entry.sats, cause === 'payout' ? entry.createdAt : undefined, entry.kind);
    // One shape for every line (pino leaves an undefined field out): no objects spread into it.
    const line = {
      event: 'settlement',
      cause,
      rewardId: entry.id,
      userId: entry.userId,
      achievementId: entry.achievementId,
      sats: entry.sats,
      from,
      to: entry.state,
      reason: entry.reason && entry.state !== 'paid' ? entry.reason : undefined,
      paymentId: entry.paymentId || undefined,
      by: audit?.actor,
      action: audit?.action,
    };
    if (entry.reason === 'contradicted' && entry.state === 'needs_review') {
      metrics.contradicted?.();
      logger.error(line, 'the payments service contradicts a final decision: back to review');
    } else if (entry.state === 'paid' || entry.state === 'credited' || entry.state === 'rejected' || entry.state === 'sending' || entry.state === 'held')
      logger.info(line, entry.state);
    else logger.warn(line, entry.state);
  }

  /**
   * Applies a transition of the lifecycle's table, checked first: a `to` the transition cannot
   * reach, or a decision by hand without its audit note, throws LifecycleError and changes
   * nothing. A compare-and-set on the states it leaves: `stale` when the entry was no longer there.
   */
  async function apply(id: string, request: SettleRequest): Promise<SettleOutcome> {
    transition(request.transition, request.to.state, request.audit !== undefined);
    let s: Settled | undefined;
    try {
      // The core's clock, not the store's (the SQLite store runs in a thread of its own).
      const options: Parameters<Ledger['settle']>[3] = { now: request.now ?? (clock ?? Date.now)() };
      if (request.audit) options.audit = request.audit;
      if (request.limits) options.limits = request.limits;
      s = await ledger.settle(id, request.transition, request.to, options);
    } catch (err) {
      if (err instanceof DayLimitRefusal) return { kind: 'refused', reason: err.reason };
      throw err;
    }
    if (!s) return { kind: 'stale' };
    after(s, request.cause, request.audit);
    return { kind: 'settled', entry: s.entry };
  }

  return {
    /** Records a claim (sending; rejected, held or credited, and told; deferred too early); a known key comes back untouched. */
    async claim(claim: NewClaim, limits: ClaimLimits): Promise<ClaimResult> {
      const r = await ledger.claim(claim, limits, clock?.());
      if (r.kind === 'created') {
        // The store decided it; the table says what a claim may become.
        if (!LIFECYCLE.claim.to.includes(r.entry.state as never)) throw new LifecycleError(`a claim cannot become ${r.entry.state}`);
        if (told(r.entry.state)) after({ entry: r.entry, from: 'sending', ...(r.event ? { event: r.event } : {}) }, 'claim');
      }
      return r;
    },

    /**
     * Records a withdrawal from the player's balance (sending; held, and told). A known key comes
     * back untouched; a refusal (WithdrawalRefusal) is thrown with nothing written.
     */
    async withdraw(w: NewWithdrawal, limits: WithdrawalLimits): Promise<ClaimResult> {
      if (!ledger.withdraw) throw new Error('this ledger keeps no balances: balance mode needs the SQLite or PostgreSQL store');
      const r = await ledger.withdraw(w, limits, clock?.());
      if (r.kind === 'created') {
        if (!LIFECYCLE.withdraw.to.includes(r.entry.state as never)) throw new LifecycleError(`a withdrawal cannot become ${r.entry.state}`);
        if (told(r.entry.state)) after({ entry: r.entry, from: 'sending', ...(r.event ? { event: r.event } : {}) }, 'claim');
      }
      return r;
    },

    apply,

    /** The entry as the client sees it: the record its player was told with when it was just settled, else built. */
    recordOf(entry: LedgerEntry): RewardRecord {
      return lastTold?.entry === entry ? lastTold.record : toRewardRecord(entry);
    },

    /**
     * A tournament's results (core/tournaments.ts): every prize made by the claim transition, in
     * one transaction of the store; each prize the player sees (held, credited) is told after it.
     */
    async postTournament(post: TournamentPost, limits: ClaimLimits): Promise<TournamentPostResult> {
      if (!ledger.postTournament) throw new Error('this ledger keeps no tournaments: they need the SQLite or PostgreSQL store');
      const r = await ledger.postTournament(post, limits, (clock ?? Date.now)());
      if (r.kind === 'created')
        for (const p of r.prizes) {
          if (!LIFECYCLE.claim.to.includes(p.entry.state as never)) throw new LifecycleError(`a prize cannot become ${p.entry.state}`);
          if (told(p.entry.state)) after({ entry: p.entry, from: 'sending', ...(p.event ? { event: p.event } : {}) }, 'claim');
        }
      return r;
    },

    /**
     * A guest linked a gamertag: the lifecycle's `merge` of each of its credits into the player
     * (moved, or dropped as one the player already holds), in one transaction; each change is told.
     */
    async merge(guestId: string, userId: string, rules: MergeRules, audit: AuditNote): Promise<GuestMerge> {
      if (!ledger.mergeGuest) throw new Error('this ledger keeps no balances: balance mode needs the SQLite or PostgreSQL store');
      transition('merge', 'credited', true);
      const r = await ledger.mergeGuest(guestId, userId, rules, audit, (clock ?? Date.now)());
      for (const s of [...r.moved, ...r.dropped]) after(s, 'merge', audit);
      return r;
    },

    /** `apply`, for the transitions no day's limits can refuse: the entry as committed, or undefined when it had moved on. */
    async settle(id: string, request: SettleRequest): Promise<LedgerEntry | undefined> {
      const r = await apply(id, request);
      if (r.kind === 'refused') throw new LifecycleError(`${request.transition} was refused (${r.reason}): use apply`);
      return r.kind === 'settled' ? r.entry : undefined;
    },

    /** The lifecycle's `send`: the recovery point before the payment request leaves (a phase; false if no longer sending and claimed). */
    async send(entry: LedgerEntry): Promise<boolean> {
      if (!allows('send', entry.state)) return false;
      return ledger.markSent(entry.id);
    },
  };
}

export type Settlements = ReturnType<typeof createSettlements>;
