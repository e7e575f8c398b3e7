// What the relay asks the ledger to record for a claim, the limits it is checked against, and what it gets back.
import type { DailyLimits } from '../../../wire/earning-rules.js';
import type { RepeatPolicy } from '../../../wire/relay-api.js';
import type { PlayerEvent } from './event-log.js';
import type { LedgerEntry } from './ledger-entry.js';

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
  /**
   * The key's entry was approved by an operator at these sats, then deferred by the service's
   * outage before it left: a streak decided at no more is not held again (core/reviews.ts
   * approvalCovers). Set by core/claims.ts from the entry's audit trail, only when a hold may apply.
   */
  approvedSats?: number;
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

export type DayLimit = 'user_daily_cap' | 'daily_budget' | 'address_daily_cap';

/** A transition that decides again (approve) found no room on its day: nothing changed. Thrown by `settle`. */
export class DayLimitRefusal extends Error {
  override name = 'DayLimitRefusal';
  constructor(readonly reason: DayLimit) {
    super(`no room today: ${reason}`);
  }
}
