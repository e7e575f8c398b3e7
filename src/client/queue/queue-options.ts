// What the queue is given, and what it tells the bus around it.
import type { RewardRecord } from '../../wire/relay-api.js';
import type { RelayClient, RetryOptions } from '../delivery/index.js';
import type { FinalEvent, RewardIntent, RewardWaiting } from '../events.js';
import type { PlayerSessions } from '../players/index.js';
import type { LastEarned } from '../rules/index.js';
import type { RewardStorage, WriteBatch } from '../storage/index.js';

/** What the queue tells the bus around it. */
export interface QueueEvents {
  sent(intent: RewardIntent, attempt: number): void;
  /** The intent stays queued: too early (425) until `retryAt` (ms), or until the guest links a gamertag (403 `gamertag_required`). */
  waiting(e: RewardWaiting): void;
  /** The relay answered for good: the intent has left the queue (its deletion is in the write batch). */
  settled(intent: RewardIntent, event: FinalEvent, record: RewardRecord | undefined, reason: string | undefined): void;
  reachable(online: boolean): void;
  error(err: unknown): void;
}

export interface QueueOptions {
  storage: RewardStorage;
  writes: WriteBatch;
  relay: RelayClient;
  /** The players' sessions: the bus passes PlayerSessions, or a strategy around it (it follows renewed tokens). */
  sessions: Pick<PlayerSessions, 'current' | 'forUser' | 'expire' | 'waitsForLink'>;
  /** Kept in step with the intents queued, for unlock()'s repeat rules. */
  earned: LastEarned;
  /** Shared by the game's tabs: only one sends at a time. */
  lockName: string;
  tab: string;
  /** Asks the other tabs to let go of the lock (the tab channel); without it, the lock is held for one send at a time. */
  knock?: () => void;
  concurrency: number;
  retry: RetryOptions | undefined;
}
