import type { DailyLimits } from '../../../wire/earning-rules.js';
import type { RepeatPolicy, RewardTerms } from '../../../wire/relay-api.js';
import type { EntryKind, RewardState, TransitionName } from '../lifecycle.js';
import type { PlayerEvent } from './event-log.js';

/** Where an intent stands in the ledger: the lifecycle's states (core/lifecycle.ts). */
export type LedgerState = RewardState;

/**
 * Where a `sending` entry's payment is, as a recovery point: `claimed` (committed, the gamertag
 * being looked up; nothing has left the relay) or `sent` (committed just before the payment
 * request is written: the service may have it). After a crash, a claimed entry is deferred (sent
 * again, by the client's retry); only a sent one waits for review.
 */
export type SendPhase = 'claimed' | 'sent';

export interface LedgerEntry {
  id: string;
  userId: string;
  idempotencyKey: string;
  /** A hash of what was asked, so a reused key with another body is caught. */
  requestHash: string;
  achievementId: string;
  sats: number;
  state: LedgerState;
  /** While `sending`. */
  phase?: SendPhase;
  reason?: string;
  paymentId?: string;
  /** The gamertag the payment went to, for the audit trail. */
  gamertag?: string;
  occurredAt?: string;
  /** The client's address as claimed from (IPv6 grouped by /64), for the per-address cap. */
  address?: string;
  createdAt: number;
  settledAt?: number;
  /** The UTC day its sats count on (its claim's, or its approval's when that came on a later day). Set by the stores. */
  day?: string;
  /** A credit to the player's balance or a withdrawal from it; absent: a reward paid at once. */
  kind?: Exclude<EntryKind, 'payout'>;
  /** What its amount was decided by (the price used, a streak's day, a prize's place): on its record as they are. */
  terms?: RewardTerms;
}

export type { EntryKind } from '../lifecycle.js';

/** A streak as the relay's catalog holds it: its steps in sats, or in dollars (`{ usd }`, issue 38: core/price.ts's Amount). */
export type StreakSteps = { kind: 'streak'; sats: Array<number | { usd: number }> };

/** A repeat policy as the relay's catalog holds it: the wire's, with a streak's steps possibly in dollars. */
export type Repeat = RepeatPolicy | StreakSteps;

/** What the relay asks the ledger to record: the entry's identity, and the rule it is checked by. */
export interface NewClaim extends Pick<LedgerEntry, 'id' | 'userId' | 'idempotencyKey' | 'requestHash' | 'achievementId' | 'sats' | 'occurredAt' | 'address' | 'terms'> {
  /** A streak's steps may be in dollars (core/streak.ts decides its day's sats at `terms.btcUsd`). */
  repeat: Repeat;
  /** Set when the claim is refused before any check (e.g. verifyClaim said no, or its proof is bad). */
  rejectReason?: string;
  /**
   * Witnessed play: the claim is only decided once the player's session (from `playStartedAt`,
   * ms) is `minPlayMs` old by the ledger's clock; before that it is deferred with `too_early`.
   */
  playStartedAt?: number;
  minPlayMs?: number;
  /** A proof's nonce: spent in the claim's transaction; a second claim with it is `proof_used`. */
  proofNonce?: string;
  /** Recorded as `held` (for an operator) rather than `sending`, when not refused. */
  hold?: boolean;
  /** The gamertag in the player's token at claim time: recorded on the entry (a payment later records the one it paid). */
  gamertag?: string;
  /** Balance mode: decided as any claim, and credited to the player's balance (`credited`) in place of a payment. */
  credit?: boolean;
  /**
   * A streak's claim (`repeat.kind` streak, its steps in `repeat.sats`): the ledger decides its
   * day and sats (core/streak.ts), and holds it when those sats are above this (RELAY_HOLD_ABOVE_SATS; 0 or absent: never).
   */
  holdAboveSats?: number;
}

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

/** What a guest's merge did: the settled changes (each with its player's event), in order. */
export interface GuestMerge {
  /** False when the guest was merged before (nothing moved this time). */
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

/**
 * The daily cap and budget a claim is checked against (src/wire/earning-rules.ts), the sats a
 * client address may take per UTC day across every player (0 or absent: no cap), and how long an
 * operator's denial refuses the same player's claims of the same achievement (hours; 0 or absent: not at all).
 */
export type ClaimLimits = DailyLimits & { addressDailyCapSats?: number; denialCooldownHours?: number } & DollarLimits;

/**
 * RELAY_DAILY_BUDGET_USD and RELAY_USER_DAILY_CAP_USD (issue 38): the alternatives in dollars to
 * the sats budget and cap (one or the other for each). Each entry counts its dollar value (its
 * terms' `usd`, the value it was decided at). 0 or absent: none.
 */
export interface DollarLimits {
  dailyBudgetUsd?: number;
  userDailyCapUsd?: number;
}

/**
 * `created`: this call recorded it (sending or rejected; a rejection's player event is written in
 * the same transaction). `existing`: the key was known.
 */
export type ClaimResult = { kind: 'created'; entry: LedgerEntry; event?: PlayerEvent } | { kind: 'existing'; entry: LedgerEntry };

/** A state change as committed: the entry after it, the state it left, and the player's event. */
export interface Settled {
  entry: LedgerEntry;
  from: LedgerState;
  /** The player's `reward` event, appended in the same transaction (for states the player sees). */
  event?: PlayerEvent;
}

export interface SettleOptions {
  /** The settlement's time. Default: now. */
  now?: number;
  /** An operator's decision: recorded with who and when in the same transaction. */
  audit?: AuditNote;
  /**
   * For a transition that decides again (approve): the limits of the day it happens on. An entry
   * reserved on an earlier UTC day is checked against this day's caps and budget, and moves there.
   */
  limits?: ClaimLimits;
}

/** What a settlement did: the change committed, or undefined when the entry was not in a state the transition leaves. */
export type SettleResult = Settled | undefined;

export type DayLimit = 'user_daily_cap' | 'daily_budget' | 'address_daily_cap';

/** A transition that decides again (approve) found no room on its day: nothing changed. Thrown by `settle`. */
export class DayLimitRefusal extends Error {
  override name = 'DayLimitRefusal';
  constructor(readonly reason: DayLimit) {
    super(`no room today: ${reason}`);
  }
}

export type Settlement =
  /** An operator approved a held entry: it is paid through the service next. */
  | { state: 'sending' }
  /** An operator approved a held credit: on the player's balance now. */
  | { state: 'credited' }
  /** An operator denied a held entry. */
  | { state: 'rejected'; reason: string }
  | { state: 'paid'; paymentId: string; gamertag?: string }
  | { state: 'failed'; reason: string; gamertag?: string }
  | { state: 'needs_review'; reason: string; paymentId?: string; gamertag?: string }
  | { state: 'deferred'; reason: string };

/**
 * The relay's record of every intent. Everything is async so a shared Postgres ledger can
 * stand in; the SQLite one commits concurrent writes together.
 */
export interface Ledger extends TournamentLedger {
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
   * decided whole, as new). The other entries and the project's daily totals stay. In small
   * transactions, so claims go on meanwhile. Returns how many rows went.
   */
  prune?(beforeDay: string, spentBefore: number, deferredBefore: number): Promise<number>;
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
  /** Witnessed play: a heartbeat at `now`; the time since the last one counts when at most `maxGapMs`. Returns the play time. */
  beat?(userId: string, now: number, maxGapMs: number): Promise<number>;
  /** The game's server raises the allowance: true when recorded, false when its key was known. */
  raiseAllowance?(raise: AllowanceRaise, now: number): Promise<boolean>;
  /**
   * A guest linked a gamertag: in one transaction, the lifecycle's `merge` of each of the guest's
   * credits, oldest first, into `userId` (credited, its reservation moved), or dropped (rejected
   * with the repeat rule's reason) when the player's entries of that achievement already hold it
   * (`repeats`: each achievement's policy; one not listed is moved). The guest is recorded as
   * merged: from then on `mergedInto(guestId)` names the player. A guest merged before moves nothing.
   */
  mergeGuest?(guestId: string, userId: string, repeats: ReadonlyMap<string, Repeat>, audit: AuditNote, now: number): Promise<GuestMerge>;
  /** The player a guest was merged into, if it was. */
  mergedInto?(guestId: string): Promise<string | undefined>;
  /** What the relay owes its players: every balance together (credits minus withdrawals paid or under way). */
  balancesOwed?(): Promise<number>;
  close(): Promise<void>;
}

/** A tournament's results as the relay asks the ledger to record them (core/tournaments.ts), decided in one transaction. */
export interface TournamentPost {
  tournamentId: string;
  period: string;
  /** The ranking as userIds, hashed: the same results posted again are a replay, other ones a conflict. */
  rankingHash: string;
  /** Who posted it: the game's server, or the operator at the command line. */
  by: string;
  /** One claim per place that wins a prize, in ranking order (its place and period in `terms`, its key deterministic). */
  prizes: NewClaim[];
}

/**
 * `created`: recorded now, every prize with its player's event (in ranking order). `existing`: the
 * same results were posted before: their prizes as they are now. `other_results`: others were.
 * `refused`: the pool does not fit the day's budget; nothing was written.
 */
export type TournamentPostResult =
  | { kind: 'created'; prizes: Array<{ entry: LedgerEntry; event?: PlayerEvent }> }
  | { kind: 'existing'; entries: LedgerEntry[] }
  | { kind: 'other_results' }
  | { kind: 'refused'; reason: 'daily_budget' };

/**
 * Tournaments (issue 37): the ledger's part, on both stores. Optional, so a ledger of one's own
 * (without tournaments) still compiles; the relay answers the route only with it.
 */
export interface TournamentLedger {
  /**
   * Records a period's results in one transaction: the post (tournament, period, ranking hash, at,
   * by) and every prize through the store's one write primitive (one batch), the pool reserved
   * from the day's budget (core/tournament-decision.ts decides, on both stores).
   */
  postTournament?(post: TournamentPost, limits: ClaimLimits, now: number): Promise<TournamentPostResult>;
  /** A player linked with this relay (by this gamertag): a ranking may name them from now on. */
  rememberPlayer?(userId: string, gamertag: string, now: number): Promise<void>;
  /** The players these names are (a userId, or the gamertag a player last linked with), as [name, userId]; a name not known is left out. */
  knownPlayers?(names: readonly string[]): Promise<Array<[string, string]>>;
}

/** Who decided a settlement by hand, and how. */
export interface AuditNote {
  actor: string;
  action: string;
}
export interface AuditRecord extends AuditNote {
  rewardId: string;
  at: number;
  fromState: LedgerState;
  toState: LedgerState;
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
