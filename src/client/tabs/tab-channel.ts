import type { PlayerSession } from '../../wire/relay-api.js';
import type { FinalEvent, RewardOutcome } from '../events.js';
import type { RewardStorage } from '../storage/index.js';

/** `lock`: a tab wants to send, and asks the one keeping the lock between its sends to let go. */
export type TabMessage = { type: 'outcome'; event: FinalEvent; outcome: RewardOutcome } | { type: 'linked'; player: PlayerSession } | { type: 'lock' };

/**
 * The name the game's tabs on one relay and queue share: their BroadcastChannel's and their Web
 * Locks'. A storage's name keeps another queue's tabs (a save slot's) out: they would take its
 * links for their own player.
 */
export const tabsName = (relayUrl: string, storage: RewardStorage) => `rewardbus:${relayUrl}${storage.name === undefined ? '' : ` ${storage.name}`}`;

/** The game's other tabs, over a BroadcastChannel where there is one (not in every runtime). */
export function createTabChannel(name: string, onMessage: (m: TabMessage) => void) {
  const channel = typeof BroadcastChannel === 'undefined' ? undefined : new BroadcastChannel(name);
  if (channel) channel.onmessage = (m: MessageEvent<TabMessage>) => onMessage(m.data);
  // In Node an open channel keeps the process alive: a script must exit when its work is done.
  (channel as { unref?: () => void } | undefined)?.unref?.();
  return {
    /** The tabs' name, which their Web Locks share. */
    name,
    /** False where there is no channel: the other tabs hear nothing. */
    open: channel !== undefined,
    post(m: TabMessage) {
      try {
        channel?.postMessage(m);
      } catch {
        // A closed channel: this tab is going away.
      }
    },
    close: () => channel?.close(),
  };
}

export type TabChannel = ReturnType<typeof createTabChannel>;
