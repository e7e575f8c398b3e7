import type { RewardTerms } from '../../wire/relay-api.js';
import type { NewClaim, Repeat, StreakSteps } from './ports/ledger.js';
import { type Amount, inDollars, satsAt } from './price.js';
import { approvalCovers } from './reviews.js';

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

/** How many of the player's last reserving entries of a streak its day is read from (streakLastOf). */
export const STREAK_LOOKBACK = 32;

/**
 * The streak's last day, from the player's last reserving entries of it (newest first, at most
 * STREAK_LOOKBACK): the newest, with the longest run of UTC days its entries make up to it. An
 * entry's recorded day is its own run; a guest's credits merged into the player (balance mode)
 * carry the guest's, so a run is counted across both: the player's day 5 yesterday and a guest's
 * day 1 today make today day 6, not day 1. For a player's own entries, the newest one's day.
 */
export function streakLastOf(newestFirst: readonly StreakLast[]): StreakLast | undefined {
  const newest = newestFirst[0];
  if (!newest) return undefined;
  let run = 0;
  let runDay = Number.NaN;
  for (let i = newestFirst.length - 1; i >= 0; i--) {
    const e = newestFirst[i]!;
    const recorded = e.terms?.streakDay ?? 1;
    const d = dayNumber(e.at);
    run = d === runDay ? Math.max(run, recorded) : d === runDay + 1 ? Math.max(recorded, run + 1) : recorded;
    runDay = d;
  }
  return run === (newest.terms?.streakDay ?? 1) ? newest : { at: newest.at, terms: { ...newest.terms, streakDay: run } };
}

export type { Repeat, StreakSteps } from './ports/ledger.js';

/** What a streak's day pays: its step, the last one past the list (sats, or dollars to turn into sats at the claim's price). */
export const streakSats = <A extends Amount>(steps: readonly A[], day: number): A => steps[Math.min(day, steps.length) - 1]!;

/** Whether any step of a streak is written in dollars: then its claims need a price (core/claims.ts). */
export const stepsInDollars = (repeat: Repeat): boolean => repeat.kind === 'streak' && repeat.sats.some(inDollars);

/** Whether a claim is a streak's: its day and sats are the ledger's to decide (decideStreak). */
export const isStreak = (claim: { repeat: Repeat }): claim is NewClaim & { repeat: StreakSteps } => claim.repeat.kind === 'streak';

/**
 * The claim as the ledger decides it: a streak's sats are its day's step (a step in dollars at the
 * price the claim carries, `terms.btcUsd`: core/claims.ts fetched it), the day is on its terms
 * (`streakDay`), and it is held when the catalog holds it or those sats are above `holdAboveSats`,
 * unless an operator approved as many for its key before an outage deferred it (`approvedSats`:
 * approvalCovers, as core/claims.ts decides any other claim); any other claim as it is.
 */
export function decideStreak(claim: NewClaim, last: StreakLast | undefined, now: number): NewClaim {
  if (!isStreak(claim)) return claim;
  const day = streakDay(last, now);
  const step = streakSats(claim.repeat.sats, day);
  // The day's step at the claim's price: a dollar step's sats and its usd, or a sats step valued
  // (a dollar budget counts it: the day's sats, not day 1's). No price: a sats step as written.
  const { sats, terms } = satsAt(step, claim.terms?.btcUsd);
  const above = claim.holdAboveSats !== undefined && claim.holdAboveSats > 0 && sats > claim.holdAboveSats;
  // The catalog's hold (`claim.hold`) too is lifted by an approval that covers the day's sats.
  const { hold: _catalogHold, ...decided } = claim;
  const hold = (claim.hold || above) && !approvalCovers(claim.approvedSats, sats);
  return { ...decided, sats, terms: { ...claim.terms, ...terms, streakDay: day }, ...(hold ? { hold: true } : {}) };
}
