import type { PlayerSession } from '../../wire/relay-api.js';
import type { FinalEvent, RewardOutcome } from '../events.js';

export type TabMessage = { type: 'outcome'; event: FinalEvent; outcome: RewardOutcome } | { type: 'linked'; player: PlayerSession };

/** The game's other tabs, over a BroadcastChannel where there is one (not in every runtime). */
export function createTabChannel(name: string, onMessage: (m: TabMessage) => void) {
  const channel = typeof BroadcastChannel === 'undefined' ? undefined : new BroadcastChannel(name);
  if (channel) channel.onmessage = (m: MessageEvent<TabMessage>) => onMessage(m.data);
  // In Node an open channel keeps the process alive: a script must exit when its work is done.
  (channel as { unref?: () => void } | undefined)?.unref?.();
  return {
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
