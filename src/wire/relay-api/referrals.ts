// Referrals: the program in the catalog, a player's code, and what a link with one answers.

/**
 * A referral program (a catalog entry with `"kind": "referral"`; never in `GET /v1/catalog`'s
 * achievements, never claimable): a player who links with another's referral code is its referee;
 * once the referee is paid a claim made `afterPlaySeconds` after their first link (of
 * `afterAchievement`, when named), the referrer and the referee are each rewarded once.
 */
export interface ReferralProgram {
  id: string;
  kind: 'referral';
  title: string;
  afterPlaySeconds: number;
  afterAchievement?: string;
  /** The most qualified referrals a referrer is paid for per UTC day; past it, the referrer's reward is `rejected` (`referrer_daily_cap`). */
  perReferrerDaily?: number;
  /**
   * Each side's reward: `<side>Sats`, or `<side>Usd` (issue 38: dollars, turned into sats at the
   * price held when the referral qualifies); exactly one of each pair (the catalog's check says so).
   */
  referrerSats?: number;
  referrerUsd?: number;
  refereeSats?: number;
  refereeUsd?: number;
}

/** A link's `referral`: `pending` (accepted, waiting to qualify), or why it will never pay. */
export type ReferralAnswer = 'pending' | 'not_new' | 'unknown_code' | 'self_referral';

/** `GET /v1/referral-code`: the player's own code, the same every time. */
export interface ReferralCodeResponse {
  code: string;
}
