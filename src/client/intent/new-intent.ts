import type { RewardIntent, UnlockOptions } from '../events.js';
import { isoTime } from './iso-time.js';
import { randomId } from './random-id.js';

/** Storage key prefix of queued intents: `intent:<id>`. */
export const INTENT = 'intent:';

/** A fresh reward intent: its idempotency key (`id`) is minted here, once, and never changes. */
export function newIntent(achievementId: string, details: RewardIntent['details'], options: UnlockOptions | undefined, now: number): RewardIntent {
  const intent: RewardIntent = { id: randomId(), achievementId, occurredAt: isoTime(now), attempts: 0, nextAttemptAt: 0 };
  if (details) intent.details = details;
  if (options?.proof) intent.proof = options.proof;
  return intent;
}
