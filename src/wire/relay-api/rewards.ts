// `POST /v1/rewards` (and its batch) and `GET /v1/rewards`: a claim, and the reward's record.
import type { Problem } from './problem.js';

/** `POST /v1/rewards` body; the amount is never the client's to say. */
export interface RewardClaim {
  achievementId: string;
  /** ISO 8601, when the player earned it (for the record; limits use the relay's clock). */
  occurredAt?: string;
  /**
   * For achievements with `proof: 'server'`: the unlock proof the game's server signed for this
   * player and achievement (docs/unlock-proofs.md). Single-use; part of the request, so a retry
   * of the same intent sends the same proof.
   */
  proof?: string;
}

/**
 * paid, rejected and failed are final. pending: the relay is still working on it.
 * needs_review: the outcome with the service is unclear; the relay (or its operator) settles it
 * and it is never paid twice. held: recorded and reserved, waiting for an operator to approve
 * (then paid) or deny (then rejected, `denied_by_operator`); the player hears the outcome as a
 * `reward` event.
 */
export type RewardStatus = 'paid' | 'rejected' | 'failed' | 'pending' | 'needs_review' | 'held' | 'credited';

/**
 * What a reward's amount was decided by, beyond its achievement: recorded with its entry when it
 * is decided (never changed by a later price or rule) and carried on its record as they are.
 */
export interface RewardTerms {
  /** The dollar value the sats were decided at: a dollar-priced entry's `usd`, or its sats at `btcUsd`. */
  usd?: number;
  /** The BTC/USD price (dollars per bitcoin) the sats were decided at. */
  btcUsd?: number;
  /** A login streak's day: 1 on the first day, or after a missed one. */
  streakDay?: number;
  /** A tournament prize: the results' period (e.g. `2026-W48`) and the place (1: first). */
  period?: string;
  place?: number;
  /** A referral's reward: the player who referred, or the one referred. */
  referral?: 'referrer' | 'referee';
}

export interface RewardRecord extends RewardTerms {
  id: string;
  /** The Idempotency-Key the client claimed it with: its intent's id. */
  idempotencyKey?: string;
  achievementId: string;
  userId: string;
  sats: number;
  status: RewardStatus;
  /** A stable code for rejected, failed and needs_review records. */
  reason?: string;
  /** The service's transaction id, once known. */
  paymentId?: string;
  createdAt: string;
  settledAt?: string;
  /** `withdrawal`: the player's withdrawal from their balance (its `sats` left the balance); absent: a reward. */
  kind?: 'withdrawal';
}

export interface RewardHistory {
  rewards: RewardRecord[];
}

/** One claim of `POST /v1/rewards/batch`: the body of `POST /v1/rewards`, with its key inside. */
export interface BatchedRewardClaim extends RewardClaim {
  idempotencyKey: string;
}

/** `POST /v1/rewards/batch` body: claims of the token's player, each decided as if sent alone. */
export interface RewardClaimBatch {
  claims: BatchedRewardClaim[];
}

/** What `POST /v1/rewards` would have answered one claim of a batch: its status, and the record or the problem. */
export type RewardClaimResult =
  | { idempotencyKey: string; status: number; reward: RewardRecord; replayed?: true }
  /** `retryAfter`: seconds, as the `Retry-After` header would have said. */
  | { idempotencyKey: string; status: number; problem: Problem; retryAfter?: number };

/** `POST /v1/rewards/batch` answer (200): one result per claim, in the order sent. */
export interface RewardClaimBatchResult {
  results: RewardClaimResult[];
}
