/**
 * Why a use case refused, in the problem codes of the relay's API (http/problems.ts maps each to
 * its status): the core says no without knowing about HTTP. A refusal changes nothing.
 */
export type RefusalCode =
  | 'bad_request'
  | 'not_found'
  | 'unknown_gamertag'
  | 'link_refused'
  | 'link_check_unavailable'
  | 'too_many_players'
  | 'service_unavailable'
  // Tournaments (core/tournaments.ts).
  | 'unknown_tournament'
  | 'unknown_player'
  | 'duplicate_player'
  | 'results_already_posted'
  | 'daily_budget'
  /** Issue 38: a dollar-priced claim, and the BTC/USD price held is older than RELAY_PRICE_MAX_AGE_SECONDS. */
  | 'price_unavailable';

/** Thrown by a use case; the HTTP side answers it as its problem. */
export class Refusal extends Error {
  constructor(
    readonly code: RefusalCode,
    readonly detail?: string,
    /** When asking again may succeed, in seconds (`Retry-After`). */
    readonly retryAfterSeconds?: number,
  ) {
    super(detail ?? code);
    this.name = 'Refusal';
  }
}
