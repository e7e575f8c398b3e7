// Balance mode: the ledger's part (withdrawals, balance facts, play, guests) and what it takes and gives.
import type { ClaimLimits, ClaimResult, Repeat } from './claim.js';
import type { LedgerEntry } from './ledger-entry.js';
import type { AuditNote, Settled } from './settlement.js';

/** A withdrawal's entry has no achievement: this, which no catalog id can be. */
export const WITHDRAWAL_ACHIEVEMENT = '';

/** A withdrawal from the player's balance, as the relay asks the ledger to debit it. */
export interface NewWithdrawal extends Pick<LedgerEntry, 'id' | 'userId' | 'idempotencyKey' | 'requestHash' | 'gamertag' | 'address'> {
  /** Absent: all that is withdrawable. */
  sats?: number;
}

/** What a withdrawal is checked against (core/withdrawal-decision.ts). */
export interface WithdrawalLimits {
  /** RELAY_MIN_WITHDRAWAL_SATS. */
  minWithdrawalSats: number;
  /** RELAY_WITHDRAWAL_DAILY_LIMIT_SATS per player per UTC day; 0: none. */
  dailyLimitSats: number;
  /** RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS; 0: no allowance (the balance and the day's limit only). */
  allowancePerPlayMinuteSats: number;
  /** RELAY_WITHDRAWAL_ALLOWANCE_START_SATS: the allowance before any play. */
  allowanceStartSats: number;
  /** RELAY_HOLD_ABOVE_SATS: a withdrawal of more waits for an operator; 0: none. */
  holdAboveSats: number;
}

/** What the ledger knows of a player's balance, read in one transaction. */
export interface BalanceFacts {
  /** Every credit's sats (state `credited`). */
  creditedSats: number;
  /** Every withdrawal paid or under way (its reserving states). */
  withdrawnSats: number;
  /** Of those, on this UTC day. */
  withdrawnTodaySats: number;
  /** Witnessed play, ms (heartbeats at most PLAY_BEAT_GAP_MS apart). */
  playMs: number;
  /** The game's server's raises of the withdrawal allowance. */
  raisedSats: number;
}

/** A withdrawal refused: nothing was written. Thrown by `withdraw`. */
export class WithdrawalRefusal extends Error {
  override name = 'WithdrawalRefusal';
  constructor(
    readonly reason: 'below_minimum' | 'insufficient_balance' | 'over_limit',
    readonly facts: BalanceFacts,
  ) {
    super(`withdrawal refused: ${reason}`);
  }
}

/** The rules a guest's merge is decided by: each achievement's repeat policy, and the player's caps. */
export interface MergeRules {
  repeats: ReadonlyMap<string, Repeat>;
  limits: ClaimLimits;
  /** Tournaments: their prizes move whatever the player's cap (still counted on its day), as a post is never refused by it. */
  prizes?: ReadonlySet<string>;
}

/** What a guest's merge did: the settled changes (each with its player's event), in order. */
export interface GuestMerge {
  /** False when the guest was merged before (then only what it still held moved: see mergeGuest). */
  merged: boolean;
  moved: Settled[];
  dropped: Settled[];
}

/** A raise of a player's withdrawal allowance by the game's server, once per key. */
export interface AllowanceRaise {
  userId: string;
  idempotencyKey: string;
  sats: number;
  reason: string;
}

/** The ledger's part in balance mode, on both stores. */
export interface BalanceLedger {
  /**
   * Balance mode (optional for a ledger of one's own that never runs in it): debits the player's
   * balance with a withdrawal, deciding its sats against the facts read in the same transaction
   * under the player's lock (so concurrent withdrawals never take more than the balance). A known
   * key comes back `existing`; a deferred one (nothing was paid) is asked again. Throws
   * WithdrawalRefusal when refused: nothing was written.
   */
  withdraw?(w: NewWithdrawal, limits: WithdrawalLimits, now?: number): Promise<ClaimResult>;
  /** A player's balance facts, as of now. */
  balance?(userId: string, now?: number): Promise<BalanceFacts>;
  /**
   * A player's withdrawals, newest first, but those deferred (nothing was paid: asked again under
   * their key, or never): read by themselves, however many rewards the player has.
   */
  withdrawals?(userId: string, limit: number): Promise<LedgerEntry[]>;
  /** Witnessed play: a heartbeat at `now`; the time since the last one counts when at most `maxGapMs`. Returns the play time. */
  beat?(userId: string, now: number, maxGapMs: number): Promise<number>;
  /**
   * The game's server raises the allowance, once per key: `created` when recorded now; else the
   * raise its key recorded before (the caller tells a replay from the same key with another raise).
   */
  raiseAllowance?(raise: AllowanceRaise, now: number): Promise<Pick<AllowanceRaise, 'sats' | 'reason'> & { created: boolean }>;
  /**
   * A guest linked a gamertag: in one transaction, the lifecycle's `merge` of each of the guest's
   * credits, oldest first, into `userId` (credited, its reservation moved), or dropped (rejected,
   * with core/claim-decision.ts mergeDecider's reason) when the player's entries of that
   * achievement already hold it (`rules.repeats`: each achievement's policy; one not listed is
   * moved) or the player's cap on the credit's day is full (`rules.limits`). The guest is recorded
   * as merged: from then on `mergedInto(guestId)` names the player. A guest merged before into the
   * same player moves what it still holds, by the same rules (a claim committed after the merge:
   * it was on its way when the guest linked); merged into another player, nothing.
   */
  mergeGuest?(guestId: string, userId: string, rules: MergeRules, audit: AuditNote, now: number): Promise<GuestMerge>;
  /** The player a guest was merged into, if it was. */
  mergedInto?(guestId: string): Promise<string | undefined>;
  /** What the relay owes its players: every balance together (credits minus withdrawals paid or under way). */
  balancesOwed?(): Promise<number>;
}
