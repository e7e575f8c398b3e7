import type { CatalogEntry } from '../wire/relay-api.js';

/**
 * Why the player cannot earn an achievement now, by the catalog's repeat policy and when they
 * last earned it: the same rules the relay applies, checked here so no request is wasted.
 */
export function earnBlock(entry: CatalogEntry | undefined, lastEarned: number | undefined, now: number): { reason: string; retryAt?: number } | undefined {
  if (!entry) return { reason: 'unknown_achievement' };
  if (lastEarned === undefined) return undefined;
  const { repeat } = entry;
  if (repeat.kind === 'once') return { reason: 'already_claimed' };
  if (repeat.kind === 'daily') {
    const day = (ms: number) => Math.floor(ms / 86_400_000);
    return day(lastEarned) === day(now) ? { reason: 'already_claimed_today', retryAt: (day(now) + 1) * 86_400_000 } : undefined;
  }
  const retryAt = lastEarned + repeat.seconds * 1000;
  return now < retryAt ? { reason: 'cooldown', retryAt } : undefined;
}
