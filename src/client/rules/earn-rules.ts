import { repeatBlock } from '../../wire/earning-rules.js';
import type { CatalogEntry, RewardRecord } from '../../wire/relay-api.js';
import type { RewardIntent } from '../events.js';

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

/**
 * lastEarned() per achievement for the current player, kept as intents are queued, so unlock()
 * reads one entry instead of scanning the queue and history (1,000 offline unlocks stay O(n)).
 * Whatever else changes (an intent or a record comes or goes, another player) drops the entry,
 * and `scan` computes it again once, when next asked.
 */
export class LastEarned {
  readonly #at = new Map<string, number | undefined>();

  constructor(private readonly scan: (achievementId: string) => number | undefined) {}

  get(achievementId: string): number | undefined {
    if (!this.#at.has(achievementId)) this.#at.set(achievementId, this.scan(achievementId));
    return this.#at.get(achievementId);
  }

  /** An intent of the current player was queued, earned at `at`. */
  queued(achievementId: string, at: number) {
    // Not known yet: the next get() scans the queue, this intent included.
    if (this.#at.has(achievementId)) this.#at.set(achievementId, Math.max(this.#at.get(achievementId) ?? 0, at));
  }

  /** Recompute this achievement (or every one) when next asked. */
  drop(achievementId?: string) {
    if (achievementId === undefined) this.#at.clear();
    else this.#at.delete(achievementId);
  }
}
