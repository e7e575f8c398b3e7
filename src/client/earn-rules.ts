import type { CatalogEntry, RewardRecord } from '../wire/relay-api.js';
import { repeatBlock } from '../wire/earning-rules.js';
import type { RewardIntent } from './events.js';

/**
 * Why the player cannot earn an achievement now: unknown to the catalog, or blocked by its
 * repeat policy. The relay applies the same rules (src/wire/earning-rules.ts); checked here so
 * no request is wasted.
 */
export function earnBlock(entry: CatalogEntry | undefined, lastEarned: number | undefined, now: number): { reason: string; retryAt?: number } | undefined {
  return entry ? repeatBlock(entry.repeat, lastEarned, now) : { reason: 'unknown_achievement' };
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
