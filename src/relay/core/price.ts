import type { RewardTerms } from '../../wire/relay-api.js';

/**
 * An amount as a catalog writes it: sats, or dollars (`{ "usd": 0.05 }`) turned into sats at the
 * price when a claim is decided. Every amount in the catalog (an achievement's, a list's) is read
 * through satsAt, so a program that pays from a list gains dollars by reading it here.
 */
export type Amount = number | { usd: number };

export const SATS_PER_BTC = 100_000_000;

/** Dollars as whole micro-dollars: what dollar budgets and caps count in (exact in integers on both ledgers). */
export const usdMicros = (usd: number): number => Math.round(usd * 1_000_000);

/** A BTC/USD price to the cent, as the relay keeps and records it (so every ledger values its sats alike). */
export const toCents = (btcUsd: number): number => Math.round(btcUsd * 100) / 100;

/** The dollar value an entry counts at (its terms' `usd`), in micro-dollars; 0 for an entry decided without a price. */
export const entryUsdMicros = (terms: Pick<RewardTerms, 'usd'> | null | undefined): number => (terms?.usd === undefined ? 0 : usdMicros(terms.usd));

/** Whether the amount needs a price to be paid. */
export const inDollars = (amount: Amount): amount is { usd: number } => typeof amount !== 'number';

/**
 * The sats an amount is worth at `btcUsd` (dollars per bitcoin), and the terms to record beside
 * them. Dollars: `usd × 10^8 / btcUsd` rounded to the nearest sat (half up), at least 1 sat;
 * terms `{ usd, btcUsd }`. Sats with a price (a dollar budget counts them): the sats as written,
 * terms `{ usd: their value to the micro-dollar, btcUsd }`. Sats without a price: no terms.
 */
export function satsAt(amount: Amount, btcUsd?: number): { sats: number; terms: Pick<RewardTerms, 'usd' | 'btcUsd'> } {
  if (!inDollars(amount)) {
    if (btcUsd === undefined) return { sats: amount, terms: {} };
    // Whole cents times whole sats: an integer, so the micro-dollars round the same everywhere.
    const micros = Math.round((amount * Math.round(btcUsd * 100)) / 10_000);
    return { sats: amount, terms: { usd: micros / 1_000_000, btcUsd } };
  }
  if (btcUsd === undefined || !(btcUsd > 0)) throw new Error('a dollar amount needs a price');
  return { sats: Math.max(1, Math.round((amount.usd * SATS_PER_BTC) / btcUsd)), terms: { usd: amount.usd, btcUsd } };
}
