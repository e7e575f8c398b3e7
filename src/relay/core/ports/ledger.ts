import type { TransitionName } from '../lifecycle.js';
import type { BalanceLedger } from './balance-ledger.js';
import type { ClaimLimits, ClaimResult, NewClaim } from './claim.js';
import type { LedgerEntry, LedgerState } from './ledger-entry.js';
import type { AuditRecord, Settlement, SettleOptions, SettleResult } from './settlement.js';
import type { TournamentLedger } from './tournament-ledger.js';

// The ledger's parts live beside it (the entry, a claim, a settlement, balance mode, tournaments); importers take them from here.
export {
  type AllowanceRaise,
  type BalanceFacts,
  type BalanceLedger,
  type GuestMerge,
  type MergeRules,
  type NewWithdrawal,
  WITHDRAWAL_ACHIEVEMENT,
  type WithdrawalLimits,
  WithdrawalRefusal,
} from './balance-ledger.js';
export { type ClaimLimits, type ClaimResult, type DayLimit, DayLimitRefusal, type DollarLimits, type NewClaim, type Repeat, type StreakSteps } from './claim.js';
export type { EntryKind, LedgerEntry, LedgerState, SendPhase } from './ledger-entry.js';
export type { AuditNote, AuditRecord, Settled, Settlement, SettleOptions, SettleResult } from './settlement.js';
export type { TournamentLedger, TournamentPost, TournamentPostResult } from './tournament-ledger.js';

/**
 * The relay's record of every intent. Everything is async so a shared Postgres ledger can
 * stand in; the SQLite one commits concurrent writes together.
 */
export interface Ledger extends TournamentLedger, BalanceLedger {
  /** The entry for a player's idempotency key. */
  find(userId: string, idempotencyKey: string): Promise<LedgerEntry | undefined>;
  /**
   * Records the claim and reserves its sats, or rejects it, checking repeat policy, the user's
   * daily cap and the daily budget in the same transaction. A known key (other than a deferred
   * one, which is claimed afresh) comes back as `existing`, untouched. Its time is `now`, or by
   * default the moment it is checked, under its locks.
   */
  claim(claim: NewClaim, limits: ClaimLimits, now?: number): Promise<ClaimResult>;
  /**
   * The lifecycle's `send`: records that the entry's payment is about to leave (durably, before it
   * does), a change of phase only. False if it is no longer sending and claimed.
   */
  markSent(id: string): Promise<boolean>;
  /**
   * Applies one of the lifecycle's transitions (core/lifecycle.ts) to an entry, through the store's
   * one write primitive: the row, its reservation (leaving a reserving state frees exactly what was
   * reserved; entering one reserves; a move to another day moves it), its audit row
   * (`options.audit`) and, when the new state is one the player sees, the player's `reward` event,
   * in one transaction. A compare-and-set on the states the transition leaves (and, for those that
   * need the payment unsent, on the phase): undefined when the entry was not there.
   * Only the settlement core (core/settlements.ts) calls it; it checks `to` against the table.
   */
  settle(id: string, transition: TransitionName, to: Settlement, options?: SettleOptions): Promise<SettleResult>;
  get(id: string): Promise<LedgerEntry | undefined>;
  /** A player's entries, newest first. */
  history(userId: string, limit: number): Promise<LedgerEntry[]>;
  /**
   * A player's entries paid or credited (no withdrawal) at or after `since` (ms), of one
   * achievement if given, oldest first: the referral sweep's candidates for a qualifying payment,
   * however much the player earned since.
   */
  earnedSince(userId: string, since: number, achievementId: string | undefined, limit: number): Promise<LedgerEntry[]>;
  inState(state: LedgerState): Promise<LedgerEntry[]>;
  /**
   * `sending` entries no live relay is working on: for recovery. SQLite (one process): those
   * from before this process started. PostgreSQL (many relays): those whose owner's lease ran out.
   */
  abandoned(now: number, startedAt: number): Promise<LedgerEntry[]>;
  /** Sats reserved or paid on this UTC day (`YYYY-MM-DD`), all players together. */
  budgetUsed(day: string): Promise<number>;
  /** The dollar value (each entry's terms' `usd`) reserved or paid on this UTC day, all players together: for the operator (issue 38). */
  budgetUsedUsd?(day: string): Promise<number>;
  /**
   * Records that `address` linked `userId` on `day`, unless it already linked `max` other
   * players that day (0: no cap): false then. Concurrent-safe, across relays on PostgreSQL.
   */
  linkAddress(address: string, day: string, userId: string, max: number): Promise<boolean>;
  /**
   * The players `address` linked on `day`, read only: a link is refused past the cap before the
   * service is asked who the gamertag is; linkAddress then records it (and decides a race).
   */
  linkedPlayers(address: string, day: string): Promise<string[]>;
  /** Per UTC day from `fromDay` on, per state: how many entries, their sats, how many players. */
  report(fromDay: string): Promise<DayReport[]>;
  /** The newest entries, optionally of one player or one achievement. */
  recent(filter: { userId?: string; achievementId?: string }, limit: number): Promise<LedgerEntry[]>;
  /** An entry's audit trail, oldest first. */
  audits(id: string): Promise<AuditRecord[]>;
  /**
   * Forgets what only a past day's limits read: each player's and address's reservations and
   * the players each address linked, for days before `beforeDay`; proof nonces spent before
   * `spentBefore` (ms), whose proofs have expired; and deferred entries last claimed before
   * `deferredBefore` (ms), which hold nothing (nothing paid or reserved; a retry with the key is
   * decided whole, as new), but a tournament's prize (no client retries it: the relay's redelivery
   * does, and it is the prize's only record). The other entries and the project's daily totals stay. In small
   * transactions, so claims go on meanwhile. Returns how many rows went.
   */
  prune?(beforeDay: string, spentBefore: number, deferredBefore: number): Promise<number>;
  close(): Promise<void>;
}

export interface DayReport {
  day: string;
  state: LedgerState;
  count: number;
  sats: number;
  players: number;
}

export { RESERVING_STATES, TOLD_STATES } from '../lifecycle.js';

/** Rows prune() deletes per transaction: small enough that a claim never waits long behind it. */
export const PRUNE_CHUNK = 1_000;

/** Runs a delete of at most PRUNE_CHUNK rows until one deletes fewer; returns how many went. */
export async function inChunks(chunk: () => Promise<number>): Promise<number> {
  let n = 0;
  for (let gone = PRUNE_CHUNK; gone === PRUNE_CHUNK; n += gone) gone = await chunk();
  return n;
}

/** The player's event type for a reward's change of state. */
export const REWARD_EVENT = 'reward';
