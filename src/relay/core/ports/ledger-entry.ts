// The ledger's record of one intent: a reward, a credit or a withdrawal.
import type { RewardTerms } from '../../../wire/relay-api.js';
import type { EntryKind, RewardState } from '../lifecycle.js';

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
