import { createHash } from 'node:crypto';
import type { RewardTerms } from '../../wire/relay-api.js';
import type { ClaimLimits, LedgerEntry } from './ports/ledger.js';
import { type Amount, entryUsdMicros, satsAt, usdMicros } from './price.js';

/**
 * A tournament's results, decided: which places win which prize, whether the pool fits the day's
 * budget, whether a post is new, the same again, or other results. Pure: both ledgers (SQLite in
 * its thread, PostgreSQL under the players' locks and the budget row) ask here, so they decide alike.
 */

/** A place that wins a prize: its player (a userId), its sats, and (priced) the usd and btcUsd they were decided at. */
export interface PrizePlace {
  place: number;
  userId: string;
  sats: number;
  terms?: Pick<RewardTerms, 'usd' | 'btcUsd'>;
}

/**
 * A prize's sats as the catalog says it: sats as written, or dollars (`{ "usd": x }`, issue 38) at
 * the post's price. The one place a prize becomes sats, once, when the results are decided.
 */
export const prizeSats = (prize: Amount, btcUsd?: number) => satsAt(prize, btcUsd);

/** One prize per place, in ranking order, at `btcUsd` (needed when a prize is in dollars); places past the prize list get nothing. */
export function prizePlaces(prizes: readonly Amount[], ranking: readonly string[], btcUsd?: number): PrizePlace[] {
  return ranking.slice(0, prizes.length).map((userId, i) => {
    const { sats, terms } = prizeSats(prizes[i]!, btcUsd);
    return { place: i + 1, userId, sats, ...(btcUsd === undefined ? {} : { terms }) };
  });
}

/** The prize's idempotency key: one per tournament, period and place, so a retry or a second relay never makes a second one. */
/** What every prize's idempotency key starts with (no client's key can: a client's is its intent's UUID). */
export const PRIZE_KEY_PREFIX = 'tournament:';
export const prizeKey = (tournamentId: string, period: string, place: number): string => `${PRIZE_KEY_PREFIX}${tournamentId}:${period}:${place}`;

/** Whether an entry is a tournament's prize: its key is one only prizes have. */
export const isPrize = (entry: Pick<LedgerEntry, 'idempotencyKey'>): boolean => entry.idempotencyKey.startsWith(PRIZE_KEY_PREFIX);

/**
 * What a prize is decided by, posted and after (sent again, approved on a later day): the day's
 * budget alone. No player's or address's cap, nor an operator's denial of another prize: the
 * game's server awarded it, no client claimed it.
 */
export function prizeLimits(limits: ClaimLimits): ClaimLimits {
  const { userDailyCapUsd: _perPlayer, ...budgets } = limits;
  return { ...budgets, userDailyCapSats: 0, addressDailyCapSats: 0, denialCooldownHours: 0 };
}

/**
 * A gamertag as the relay files its linked players under: the service's gamertags are
 * case-insensitive, so a ranking naming a player in another case than the one they linked with
 * still names them. A ledger matches a name as written too (players filed before this, as linked).
 */
export const gamertagKey = (gamertag: string): string => gamertag.toLowerCase();

/** The ranking (as userIds, so a gamertag and its userId are the same results), as the post records it. */
export const rankingHash = (userIds: readonly string[]): string => createHash('sha256').update(userIds.join('\n')).digest('base64url');

/** What a post is, beside the one recorded for its period (if any): new, the same results again, or other ones. */
export function resultsDecision(posted: string | undefined, hash: string): 'insert' | 'existing' | 'other_results' {
  if (posted === undefined) return 'insert';
  return posted === hash ? 'existing' : 'other_results';
}

/**
 * Whether the whole pool fits the day's budget (what is reserved today, every player together):
 * all of it is reserved, or none. Under a dollar budget (issue 38) the pool's dollar value counts
 * too: each prize's terms' `usd`, a sats prize's at the price the post was decided at, as a
 * claim's is (core/claim-decision.ts), against `projectUsdMicros` reserved today. A prize counts
 * on its player's daily cap but is not refused by it: the game's server awarded it, no client claimed it.
 */
export function poolRefusal(
  prizes: ReadonlyArray<{ sats: number; terms?: Pick<RewardTerms, 'usd'> | undefined }>,
  projectSats: number,
  limits: Pick<ClaimLimits, 'dailyBudgetSats' | 'dailyBudgetUsd'>,
  projectUsdMicros = 0,
): 'daily_budget' | undefined {
  const pool = prizes.reduce((sum, p) => sum + p.sats, 0);
  if (limits.dailyBudgetSats > 0 && projectSats + pool > limits.dailyBudgetSats) return 'daily_budget';
  const budgetUsd = limits.dailyBudgetUsd ?? 0;
  if (budgetUsd <= 0) return undefined;
  const poolUsd = prizes.reduce((sum, p) => sum + entryUsdMicros(p.terms), 0);
  return projectUsdMicros + poolUsd > usdMicros(budgetUsd) ? 'daily_budget' : undefined;
}

/** The names a ranking lists more than once (a player listed twice, by the same name, or by userId and gamertag). */
export function listedTwice(names: readonly string[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const n of names) (seen.has(n) ? twice : seen).add(n);
  return [...twice];
}
