// `POST /v1/players`: linking a gamertag (or a guest), and the session it answers.
import type { ReferralAnswer } from './referrals.js';

/** `POST /v1/players` body; `{}` makes a guest (balance mode). */
export interface LinkPlayerRequest {
  gamertag?: string;
  /** A guest's token: linking merges the guest's credits into the player's balance, and the guest's token stops working. */
  guestToken?: string;
  /** For a relay with a human check at link (a captcha's response token): passed to its hook. */
  humanCheck?: string;
  /** Another player's referral code (`GET /v1/referral-code`): counts only on this userId's first link with the relay. */
  referralCode?: string;
}

/** `POST /v1/players` answer: the player token authorizes the player's own rewards. */
export interface PlayerSession {
  userId: string;
  /** Empty for a guest. */
  gamertag: string;
  token: string;
  /** ISO 8601; link again after it. */
  expiresAt: string;
  /** A guest (balance mode, `POST /v1/players` with `{}`): earns under a relay-made id, withdraws once it links a gamertag. */
  guest?: true;
  /** A link with a `guestToken`: what moved from the guest's balance to the player's. */
  merge?: GuestMerge;
  /** A link with a `referralCode`: whether it may pay once the player has played (`pending`), or why it never will. */
  referral?: ReferralAnswer;
}

/** A guest's credits moved to the player who linked; those the player already held (by the repeat rules), or that its daily cap has no room for, are dropped. */
export interface GuestMerge {
  guestId: string;
  /** Credits moved to the player, and their sats: a credit held for an operator moves too, still held (on the balance once approved). */
  moved: number;
  movedSats: number;
  dropped: Array<{ id: string; achievementId: string; sats: number; reason: string }>;
}
