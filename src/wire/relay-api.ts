/**
 * The relay's HTTP API v1 on the wire: the only module both the client and the relay import.
 * Types only, so it costs the client bundle nothing.
 */

/**
 * How often an achievement can pay a player. `streak`: once per UTC day, the n-th consecutive day
 * paying `sats[min(n, length) - 1]` (a missed day starts again at day 1); its entry's `sats` is day 1's.
 */
export type RepeatPolicy = { kind: 'once' } | { kind: 'daily' } | { kind: 'cooldown'; seconds: number } | StreakPolicy;

/**
 * A login streak's steps: the sats of day 1, day 2, …; every day past the list pays the last. A
 * step the catalog writes in dollars is shown as its sats at the relay's current price (0 while it
 * knows none), and `usd` lists each step's dollars (`null`: a step in sats); absent when no step is in dollars.
 */
export type StreakPolicy = { kind: 'streak'; sats: number[]; usd?: Array<number | null> };

/** One entry of `GET /v1/catalog`. */
export interface CatalogEntry {
  id: string;
  title: string;
  /**
   * What a claim pays now: for a streak (written without it) its first day's, the steps being
   * `repeat.sats`; for a dollar-priced entry, its `usd` at the relay's current price (0 while the relay knows no price).
   */
  sats: number;
  /** Priced in dollars (issue 38): the sats are decided at the price when each claim is decided. */
  usd?: number;
  repeat: RepeatPolicy;
  /**
   * Witnessed play: a claim is paid only once the player's session on the relay (from the link
   * that issued the token) is this old; earlier, the relay answers 425 `too_early` with `retryAt`.
   */
  minPlaySeconds?: number;
  /** `server`: a claim must carry a `proof` signed by the game's server (docs/unlock-proofs.md). */
  proof?: 'server';
  /** Every claim of it waits for an operator (status `held`) before it is paid. */
  hold?: boolean;
  /** `balance`: a claim credits the player's balance (withdrawn later); `instant`: it is paid at once. Default: the relay's RELAY_PAYOUT_MODE. */
  payout?: PayoutMode;
}

/**
 * A tournament in the catalog (`"kind": "tournament"`): its prizes, in sats, by place (1st, 2nd, …).
 * Never claimed by a client: the game's server posts each period's results
 * (`POST /v1/server/tournaments/{id}/results`) and the relay pays the places that win a prize.
 */
export interface TournamentCatalogEntry {
  id: string;
  kind: 'tournament';
  title: string;
  prizes: number[];
  /**
   * Issue 38: each prize's dollars (`null`: a prize in sats), when any is written in dollars; its
   * `prizes` entry is then its sats at the relay's current price (0 while it knows none). The sats are fixed when the results are posted.
   */
  prizesUsd?: Array<number | null>;
  /** Every prize of it waits for an operator (status `held`). */
  hold?: boolean;
  /** As an achievement's: `balance` credits the prizes, `instant` pays them. Default: the relay's RELAY_PAYOUT_MODE. */
  payout?: PayoutMode;
}

/** `POST /v1/server/tournaments/{id}/results` body: the period's ranking, best first, each a userId or a gamertag. */
export interface TournamentResults {
  period: string;
  ranking: string[];
}

/** Its answer (201 first, 200 for the same results again): the prize records in ranking order (`place`, `period` on each). */
export interface TournamentPosted {
  tournamentId: string;
  period: string;
  rewards: RewardRecord[];
}

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

/** How a decided claim reaches the player: paid at once, or credited to a balance the player withdraws from. */
export type PayoutMode = 'instant' | 'balance';

export interface CatalogResponse {
  achievements: CatalogEntry[];
  /** The longest the relay takes to answer a claim (it may wait on the payments service). */
  claimTimeoutMs?: number;
  /** The most claims `POST /v1/rewards/batch` takes at once; absent: the relay takes one claim per request. */
  claimBatchMax?: number;
  /**
   * `balance`: the relay credits claims to the player's balance (RELAY_PAYOUT_MODE=balance); a player
   * may earn as a guest before linking a gamertag, and withdraws later. Absent: instant (an
   * achievement's own `payout` may still say `balance`).
   */
  payoutMode?: PayoutMode;
  /** The catalog's tournaments (never claimed by a client): their titles say what a prize was for. */
  tournaments?: TournamentCatalogEntry[];
}

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

/** A guest's credits moved to the player who linked; those the player already held (by the repeat rules) are dropped. */
export interface GuestMerge {
  guestId: string;
  moved: number;
  movedSats: number;
  dropped: Array<{ id: string; achievementId: string; sats: number; reason: string }>;
}

/** `POST /v1/events/ticket`: a single-use pass for `GET /v1/events?ticket=…`, good for `expiresIn` seconds. */
export interface EventStreamTicket {
  ticket: string;
  expiresIn: number;
}

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

export interface Health {
  ok: true;
  /** `sandbox` when the relay pays through its embedded emulation of the service. */
  mode: 'live' | 'sandbox';
  version: string;
  /**
   * Whether the caller's Origin may call the relay (RELAY_ALLOWED_ORIGINS); true without an
   * Origin. Health is readable from any origin, so a game can say "origin not allowed" rather
   * than "unreachable". Absent from relays before 0.3.
   */
  originAllowed?: boolean;
}

/** `GET /v1/ready`: this relay can take requests (its store and the payments service answer). Else 503 `not_ready`. */
export interface Readiness {
  ok: true;
  store: 'ok';
  service: 'ok';
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

/** RFC 9457 problem details, served as `application/problem+json`. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  /** Stable, machine-readable; see docs/relay-api.md. */
  code: string;
  detail?: string;
  /** `too_early` (425): when the claim will be due, ISO 8601 (also as `Retry-After`, in seconds). */
  retryAt?: string;
}

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** `POST /v1/ramp-sessions` body: buy sats with fiat in the service's widget. */
export interface RampSessionRequest {
  email: string;
  /** A lightning or Bitcoin address; default: the player's wallet in the service's app. */
  destination?: string;
  /** Fiat to pay with, e.g. USD, EUR. */
  quoteCurrency?: string;
  /** What to buy: BTC. */
  baseCurrency?: string;
  /** The game's own reference, echoed back in the purchase events. */
  referenceId?: string;
  metadata?: Record<string, string | number | boolean>;
}

/** `POST /v1/ramp-sessions` answer. The session lives 15 minutes: ask for a new one after. */
export interface RampSession {
  sessionToken: string;
  widgetUrl: string;
  expiresAt: string;
}

/** `GET /v1/withdrawal-requests/{id}`: a payable request, for a QR code. */
export interface WithdrawalRequestView {
  id: string;
  amountSats: number;
  status: 'pending' | 'expired' | 'error' | 'completed' | string;
  description: string;
  expiresAt: string;
  /** The LNURL, and the same as a `lightning:` URI for QR codes and links. */
  lnurl: string;
  uri: string;
}

/**
 * One message of `GET /v1/events` (Server-Sent Events; `event:` is the type, `id:` resumes).
 * reward: a RewardRecord changed status (every change the player sees: paid, rejected, failed,
 * needs_review, held for an operator, and a later outcome when a review or a hold is settled;
 * the same record id again). ramp.purchase.completed / ramp.purchase.failed:
 * from the service's webhooks.
 */
export type PlayerEventMessage =
  | { type: 'reward'; data: RewardRecord }
  | { type: 'ramp.purchase.completed'; data: { amount?: string | number; currency?: string; referenceId?: string } }
  | { type: 'ramp.purchase.failed'; data: { referenceId?: string } };

/** `GET /v1/balance`: what the player has earned in balance mode, and what of it they may withdraw now. */
export interface BalanceView {
  /** Credits minus withdrawals paid or under way. */
  sats: number;
  /** min(balance, allowance, the day's limit left); 0 below `minWithdrawalSats`' reach is still shown as it is. */
  withdrawableSats: number;
  minWithdrawalSats: number;
  /** Withdrawn (paid or under way) since the last UTC midnight. */
  withdrawnTodaySats: number;
  /** ISO 8601: the next UTC midnight, when `withdrawnTodaySats` starts again. */
  resetsAt: string;
}

/** `POST /v1/withdrawals` body: the sats to withdraw; absent: all that is withdrawable. */
export interface WithdrawalRequest {
  sats?: number;
}

/** paid, failed final; needs_review settled by the relay or an operator; held waits for one; pending under way. */
export type WithdrawalStatus = 'paid' | 'failed' | 'needs_review' | 'held' | 'pending';

/** A withdrawal from the player's balance, paid to their gamertag in one payment. */
export interface WithdrawalView {
  id: string;
  sats: number;
  status: WithdrawalStatus;
  /** A stable code for failed and needs_review ones. */
  reason?: string;
  paymentId?: string;
  createdAt: string;
  settledAt?: string;
}

export interface WithdrawalList {
  withdrawals: WithdrawalView[];
}
