import type { PlayerSession } from '../../wire/relay-api.js';
import type { FinalEvent, RewardOutcome } from '../events.js';

/** `lock`: a tab wants to send, and asks the one keeping the lock between its sends to let go. */
export type TabMessage = { type: 'outcome'; event: FinalEvent; outcome: RewardOutcome } | { type: 'linked'; player: PlayerSession } | { type: 'lock' };

/** The game's other tabs, over a BroadcastChannel where there is one (not in every runtime). */
export function createTabChannel(name: string, onMessage: (m: TabMessage) => void) {
  const channel = typeof BroadcastChannel === 'undefined' ? undefined : new BroadcastChannel(name);
  if (channel) channel.onmessage = (m: MessageEvent<TabMessage>) => onMessage(m.data);
  // In Node an open channel keeps the process alive: a script must exit when its work is done.
  (channel as { unref?: () => void } | undefined)?.unref?.();
  return {
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
