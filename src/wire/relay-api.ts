/**
 * The relay's HTTP API v1 on the wire: the only module both the client and the relay import.
 * Types only (and two header names), so it costs the client bundle nothing. One file per
 * resource in relay-api/; this is the door both sides import.
 */
export type { BalanceView, WithdrawalList, WithdrawalRequest, WithdrawalStatus, WithdrawalView } from './relay-api/balance.js';
export type { CatalogEntry, CatalogResponse, PayoutMode, RepeatPolicy, StreakPolicy, TournamentCatalogEntry } from './relay-api/catalog.js';
export type { EventStreamTicket, PlayerEventMessage } from './relay-api/events.js';
export type { Health, Readiness } from './relay-api/health.js';
export type { GuestMerge, LinkPlayerRequest, PlayerSession } from './relay-api/players.js';
export { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, type Problem } from './relay-api/problem.js';
export type { RampSession, RampSessionRequest } from './relay-api/ramp.js';
export type { ReferralAnswer, ReferralCodeResponse, ReferralProgram } from './relay-api/referrals.js';
export type {
  BatchedRewardClaim,
  RewardClaim,
  RewardClaimBatch,
  RewardClaimBatchResult,
  RewardClaimResult,
  RewardHistory,
  RewardRecord,
  RewardStatus,
  RewardTerms,
} from './relay-api/rewards.js';
export type { TournamentPosted, TournamentResults } from './relay-api/tournaments.js';
export type { WithdrawalRequestView } from './relay-api/withdrawal-requests.js';
