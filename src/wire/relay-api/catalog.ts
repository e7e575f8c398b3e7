// `GET /v1/catalog`: what each achievement pays and how often, and the catalog's tournaments.

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
