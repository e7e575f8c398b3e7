import { repeatBlock } from '../../wire/earning-rules.js';
import type { CatalogEntry, RewardRecord } from '../../wire/relay-api.js';
import type { RewardIntent } from '../events.js';

/**
 * Why the player cannot earn an achievement now: unknown to the catalog, or blocked by its
 * repeat policy. The relay applies the same rules (src/wire/earning-rules.ts) by its own clock;
 * checked here so no request is wasted, and never to skip what the relay would pay. Times are
 * this device's (ms); `ahead`: the most the relay's clock may be ahead of it (RelayClock), so a
 * day is the relay's UTC day at the latest it may be there. `retryAt` is by this device's clock.
 */
export function earnBlock(
  entry: CatalogEntry | undefined,
  lastEarned: number | undefined,
  now: number,
  ahead: number | undefined,
): { reason: string; retryAt?: number } | undefined {
  if (!entry) return { reason: 'unknown_achievement' };
  const by = ahead ?? 0;
  const block = repeatBlock(entry.repeat, lastEarned === undefined ? undefined : lastEarned + by, now + by);
  if (block?.retryAt !== undefined) block.retryAt -= by;
  return block;
}

/**
 * When a player last earned an achievement, by this device's clock: queued intents count (when
 * unlocked here), refused and failed rewards do not. A record's createdAt is the relay's: here,
 * the earliest it can have been (`ahead`, the most the relay's clock may be ahead of this one's),
 * or, while nothing bounds the relay's clock, a time so long ago that it blocks only an
 * achievement earned once: a device clock that is behind must not skip what the relay pays.
 */
export function lastEarned(
  achievementId: string,
  userId: string | undefined,
  queue: Iterable<RewardIntent>,
  history: readonly RewardRecord[],
  ahead: number | undefined,
): number | undefined {
  let last: number | undefined;
  for (const i of queue) {
    if (i.achievementId === achievementId && (!i.userId || i.userId === userId)) last = Math.max(last ?? 0, Date.parse(i.occurredAt));
  }
  for (const r of history) {
    if (r.achievementId === achievementId && r.status !== 'rejected' && r.status !== 'failed') {
      last = Math.max(last ?? 0, ahead === undefined ? 0 : Date.parse(r.createdAt) - ahead);
    }
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
  /** The relay's clock as the entries were computed with it: the most it may be ahead of this device's. */
  ahead: number | undefined;

  constructor(
    private readonly scan: (achievementId: string, ahead: number | undefined) => number | undefined,
    /** The most the relay's clock may be ahead of this device's, as its answers bound it so far. */
    private readonly relayAhead: () => number | undefined,
  ) {}

  get(achievementId: string): number | undefined {
    const ahead = this.relayAhead();
    // The relay's clock is known better: each record's time here is another.
    if (ahead !== this.ahead) {
      this.#at.clear();
      this.ahead = ahead;
    }
    if (!this.#at.has(achievementId)) this.#at.set(achievementId, this.scan(achievementId, ahead));
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
