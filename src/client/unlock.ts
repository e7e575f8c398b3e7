import type { EventEmitter } from 'eventemitter3';
import type { BalanceMode } from './balance-mode.js';
import type { RewardBusEvents, RewardIntent, UnlockOptions } from './events.js';
import { newIntent } from './intent/index.js';
import type { PlayerSessions } from './players/index.js';
import type { IntentQueue } from './queue/index.js';
import { type CatalogCache, earnBlock, type LastEarned } from './rules/index.js';

/** What unlock() needs of the courier around it. */
export interface UnlockParts {
  bus: Pick<EventEmitter<RewardBusEvents>, 'emit'>;
  catalog: CatalogCache;
  earned: LastEarned;
  sessions: PlayerSessions;
  queue: IntentQueue;
  /** Balance mode: a player not yet linked earns as a guest. */
  balance: Pick<BalanceMode, 'guestIfBalance'>;
}

/**
 * The game's call in its loop, once the courier has come: checked against the catalog's rules
 * (skipped, said as `reward:skipped`), or minted, given the time it is due, queued and said.
 * Returns the intent's id, or undefined when skipped.
 */
export function unlock(p: UnlockParts, achievementId: string, details?: RewardIntent['details'], options?: UnlockOptions): string | undefined {
  const now = Date.now();
  const catalog = p.catalog.byId;
  const entry = catalog?.get(achievementId);
  // An id that only a past session's catalog lacks may be a later release's: the relay decides it.
  // get() first: it reads the relay's clock that ahead then says.
  const block = catalog && (entry || p.catalog.fresh) && earnBlock(entry, p.earned.get(achievementId), now, p.earned.ahead);
  if (block) {
    p.bus.emit('reward:skipped', { achievementId, ...block });
    return undefined;
  }
  const intent = newIntent(achievementId, details, options, now);
  const userId = p.sessions.current?.userId;
  if (userId) intent.userId = userId;
  // Witnessed play: the relay would answer 425 before the player's session is this old, so the
  // first send waits for it (the relay's retryAt still rules, should it differ).
  const linkedAt = userId && entry?.minPlaySeconds ? p.sessions.linkedAt(userId) : undefined;
  const due = linkedAt === undefined ? 0 : linkedAt + entry!.minPlaySeconds! * 1000;
  if (due > now) intent.nextAttemptAt = intent.notBefore = due;
  p.queue.add(intent, now);
  const queued: Parameters<RewardBusEvents['reward:queued']>[0] = { intent, offline: !p.queue.online };
  if (entry) queued.sats = entry.sats;
  p.bus.emit('reward:queued', queued);
  if (due > now) p.bus.emit('reward:waiting', { intent, retryAt: due, reason: 'too_early' });
  if (!userId) p.balance.guestIfBalance();
  return intent.id;
}
