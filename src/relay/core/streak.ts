import type { RepeatPolicy, RewardTerms } from '../../wire/relay-api.js';
import type { NewClaim } from './ports/ledger.js';
import { satsAt } from './price.js';

// A login streak (issue 37), decided by the ledger under its lock, the same way on both stores:
// from the player's last reserving entry of the achievement (a failed or rejected claim is no
// day claimed) and the claim's time. Same-day claims are refused by the repeat rule (as daily).

const DAY_MS = 86_400_000;
const dayNumber = (ms: number) => Math.floor(ms / DAY_MS);

/** The last reserving entry of a streak's achievement: when it was claimed (ms) and its terms. */
export interface StreakLast {
  at: number;
  terms?: RewardTerms | null | undefined;
}

/**
 * The streak's day for a claim at `now`: 1 with no day before it, the day after the last one's
 * when that was yesterday (UTC), 1 again after a missed day. On the last one's own UTC day it is
 * that day's (the claim is refused as already claimed today). An entry without a day counts as day 1.
 */
export function streakDay(last: StreakLast | undefined, now: number): number {
  if (!last) return 1;
  const before = last.terms?.streakDay ?? 1;
  const gap = dayNumber(now) - dayNumber(last.at);
  return gap <= 0 ? before : gap === 1 ? before + 1 : 1;
}

/** What a streak's day pays: its step, the last one past the list. The one place a step becomes sats. */
export const streakSats = (steps: readonly number[], day: number): number => steps[Math.min(day, steps.length) - 1]!;

/** Whether a claim is a streak's: its day and sats are the ledger's to decide (decideStreak). */
export const isStreak = (claim: { repeat: RepeatPolicy }): claim is NewClaim & { repeat: { kind: 'streak'; sats: number[] } } => claim.repeat.kind === 'streak';

/**
 * The claim as the ledger decides it: a streak's sats are its day's step, the day is on its terms
 * (`streakDay`), and it is held when those sats are above `holdAboveSats`; any other claim as it is.
 */
export function decideStreak<C extends NewClaim>(claim: C, last: StreakLast | undefined, now: number): C {
  if (!isStreak(claim)) return claim;
  const day = streakDay(last, now);
  const sats = streakSats(claim.repeat.sats, day);
  const hold = claim.hold || (claim.holdAboveSats !== undefined && claim.holdAboveSats > 0 && sats > claim.holdAboveSats);
  // Valued at the price the claim carries (a dollar budget counts it): the day's sats, not day 1's.
  const value = claim.terms?.btcUsd === undefined ? {} : satsAt(sats, claim.terms.btcUsd).terms;
  return { ...claim, sats, terms: { ...claim.terms, ...value, streakDay: day }, ...(hold ? { hold: true } : {}) };
}
