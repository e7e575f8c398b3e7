import type { BalanceFacts, WithdrawalLimits } from './ports/ledger.js';

/**
 * A balance's withdrawal, decided. Pure, like the claim's decision: each ledger reads the facts
 * its own way, under the player's lock, and asks here what they mean, so the two decide alike.
 */

/** A heartbeat counts the time since the one before when they are at most this far apart. */
export const PLAY_BEAT_GAP_MS = 60_000;

/** What the player has, and may take now. */
export interface BalanceNow {
  /** Credits minus withdrawals paid or under way; never below zero. */
  sats: number;
  /** min(balance, allowance, the day's limit left). */
  withdrawableSats: number;
  withdrawnTodaySats: number;
}

/** The allowance (∞ when there is none): start + per minute of play + the server's raises − all withdrawn. */
export function allowance(facts: BalanceFacts, limits: WithdrawalLimits): number {
  if (limits.allowancePerPlayMinuteSats <= 0) return Number.POSITIVE_INFINITY;
  const earned = limits.allowanceStartSats + Math.floor(facts.playMs / 60_000) * limits.allowancePerPlayMinuteSats + facts.raisedSats;
  return Math.max(0, earned - facts.withdrawnSats);
}

export function balanceNow(facts: BalanceFacts, limits: WithdrawalLimits): BalanceNow {
  const sats = Math.max(0, facts.creditedSats - facts.withdrawnSats);
  const today = limits.dailyLimitSats > 0 ? Math.max(0, limits.dailyLimitSats - facts.withdrawnTodaySats) : Number.POSITIVE_INFINITY;
  return { sats, withdrawableSats: Math.min(sats, allowance(facts, limits), today), withdrawnTodaySats: facts.withdrawnTodaySats };
}

export type WithdrawalDecision = { sats: number; hold: boolean } | { refusal: 'below_minimum' | 'insufficient_balance' | 'over_limit' };

/**
 * `requested` absent: all that is withdrawable. Precedence: below the minimum, more than the
 * balance, more than the limits allow. Above the hold threshold: held for an operator.
 */
export function withdrawalDecision(requested: number | undefined, facts: BalanceFacts, limits: WithdrawalLimits): WithdrawalDecision {
  const now = balanceNow(facts, limits);
  const sats = requested ?? now.withdrawableSats;
  if (sats < Math.max(1, limits.minWithdrawalSats)) return { refusal: requested === undefined && now.sats >= limits.minWithdrawalSats ? 'over_limit' : 'below_minimum' };
  if (sats > now.sats) return { refusal: 'insufficient_balance' };
  if (sats > now.withdrawableSats) return { refusal: 'over_limit' };
  return { sats, hold: limits.holdAboveSats > 0 && sats > limits.holdAboveSats };
}
