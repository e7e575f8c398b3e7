import type { CatalogEntry, RepeatPolicy, TournamentCatalogEntry } from '../../wire/relay-api.js';
import { achievementsOf, type Catalog, referralPrograms } from './catalog.js';
import { type Amount, inDollars, satsAt } from './price.js';
import { type Repeat, stepsInDollars } from './streak.js';

/**
 * The catalog at a price (issue 38): what `GET /v1/catalog` shows, and whether the relay must keep
 * a price at all. An amount in dollars is shown as its sats at the price held now (0 while none is
 * known) beside its `usd`; an entry with no dollars keeps the shape it always had.
 */

/** An amount's sats at `btcUsd` (0 for dollars while no price is known). */
const shownSats = (amount: Amount, btcUsd: number | undefined): number => (!inDollars(amount) ? amount : btcUsd === undefined ? 0 : satsAt(amount, btcUsd).sats);

/** Each amount's dollars (null: in sats), when any is in dollars. */
const usdOf = (amounts: readonly Amount[]): Array<number | null> | undefined => (amounts.some(inDollars) ? amounts.map((a) => (inDollars(a) ? a.usd : null)) : undefined);

/** A repeat policy on the wire: a streak's steps in sats at `btcUsd`, and their `usd` when any is in dollars. */
function repeatAt(repeat: Repeat, btcUsd: number | undefined): RepeatPolicy {
  if (repeat.kind !== 'streak') return repeat;
  const usd = usdOf(repeat.sats);
  return { kind: 'streak', sats: repeat.sats.map((s) => shownSats(s, btcUsd)), ...(usd ? { usd } : {}) };
}

/** The achievements as `GET /v1/catalog` shows them: each one's sats at `btcUsd` and, priced in dollars, its `usd`. */
export const catalogAt = (catalog: Catalog, btcUsd: number | undefined): CatalogEntry[] =>
  achievementsOf(catalog).map((a) => ({
    ...a,
    sats: a.usd === undefined ? a.sats : shownSats({ usd: a.usd }, btcUsd),
    repeat: repeatAt(a.repeat, btcUsd),
  }));

/** The tournaments as `GET /v1/catalog` shows them: prizes in sats at `btcUsd`, and `prizesUsd` when any is in dollars. */
export const tournamentsAt = (catalog: Catalog, btcUsd: number | undefined): TournamentCatalogEntry[] =>
  [...(catalog.tournaments?.values() ?? [])].map((t) => {
    const prizesUsd = usdOf(t.prizes);
    return { ...t, prizes: t.prizes.map((p) => shownSats(p, btcUsd)), ...(prizesUsd ? { prizesUsd } : {}) };
  });

/**
 * Whether anything in the catalog is in dollars (then the relay keeps a price): an achievement's
 * `usd`, a streak's step, a tournament's prize, a referral's `referrerUsd` / `refereeUsd`.
 */
export const usesDollars = (catalog: Catalog): boolean =>
  achievementsOf(catalog).some((a) => a.usd !== undefined || stepsInDollars(a.repeat)) ||
  [...(catalog.tournaments?.values() ?? [])].some((t) => t.prizes.some(inDollars)) ||
  referralPrograms(catalog).some((r) => r.referrerUsd !== undefined || r.refereeUsd !== undefined);
