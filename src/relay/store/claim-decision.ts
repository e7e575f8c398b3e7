import { limitBlock, repeatBlock } from '../../wire/earning-rules.js';
import type { ClaimLimits, LedgerState, NewClaim } from './ledger.js';

/**
 * The claim's decision, in the order both ledgers apply it under their locks. Pure: each ledger
 * reads the facts its own way (SQLite in one thread, PostgreSQL under the player's lock) and asks
 * here what they mean, so the two can never decide differently.
 */

/** What an idempotency key already known means for a new claim with it. */
export type KeyDecision = 'existing' | 'reclaim' | 'insert';

/**
 * `existing`: the key's entry is the answer, untouched. `reclaim`: a deferred entry (nothing was
 * paid, the service was out of reach) is claimed afresh with the same body. `insert`: a new key.
 */
export function keyDecision(existing: { state: LedgerState; requestHash: string } | undefined, claim: Pick<NewClaim, 'requestHash'>): KeyDecision {
  if (!existing) return 'insert';
  return existing.state === 'deferred' && existing.requestHash === claim.requestHash ? 'reclaim' : 'existing';
}

/** What the ledger read for the rules: the last reserving claim of this achievement, and the day's sats. */
export interface ClaimFacts {
  lastReservingAt: number | undefined;
  userSats: number;
  projectSats: number;
}

/**
 * Why the claim is refused, or undefined to reserve it. Precedence: a refusal decided before the
 * ledger (the game's own check), then the repeat policy, then the player's cap, then the budget.
 */
export function refusal(claim: Pick<NewClaim, 'repeat' | 'sats' | 'rejectReason'>, facts: ClaimFacts, limits: ClaimLimits, now: number): string | undefined {
  return (
    claim.rejectReason ?? repeatBlock(claim.repeat, facts.lastReservingAt, now)?.reason ?? limitBlock(claim.sats, { user: facts.userSats, project: facts.projectSats }, limits)
  );
}

/** The state a decided claim is recorded in. */
export const claimedState = (reason: string | undefined): LedgerState => (reason ? 'rejected' : 'sending');
