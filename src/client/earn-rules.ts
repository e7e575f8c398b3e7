import type { CatalogEntry, RewardRecord } from '../wire/relay-api.js';
import type { RewardIntent } from './events.js';

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

/** When a player last earned an achievement: queued intents count, refused and failed rewards do not. */
export function lastEarned(achievementId: string, userId: string | undefined, queue: Iterable<RewardIntent>, history: readonly RewardRecord[]): number | undefined {
  let last: number | undefined;
  for (const i of queue) {
    if (i.achievementId === achievementId && (!i.userId || i.userId === userId)) last = Math.max(last ?? 0, Date.parse(i.occurredAt));
  }
  for (const r of history) {
    if (r.achievementId === achievementId && r.status !== 'rejected' && r.status !== 'failed') last = Math.max(last ?? 0, Date.parse(r.createdAt));
  }
  return last;
}
