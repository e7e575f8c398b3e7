import type { EventSourceClass, RetryOptions } from './delivery/index.js';
import type { RewardStorage } from './storage/index.js';

/** What createRewardBus() takes. */
export interface RewardBusOptions {
  /** Where the relay is, e.g. `https://rewards.example.com`. */
  relayUrl: string;
  /** Default: IndexedDB in browsers, `.rewardbus/client-queue.json` in Node. */
  storage?: RewardStorage;
  fetch?: typeof fetch;
  retry?: RetryOptions;
  /** Per request to the relay; a claim waits at least as long as the relay says it may take. Default 10 s. */
  timeoutMs?: number;
  /** Intents sent at once when a backlog drains. Default 6. */
  concurrency?: number;
  /**
   * Hears the player's event stream (purchases, rewards paid on other devices). Default: the
   * runtime's EventSource (browsers, Node 22+ with it enabled); `false` turns the stream off.
   */
  eventSource?: EventSourceClass | false;
}
