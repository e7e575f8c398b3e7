import type { PlayerEvent } from './ports/event-log.js';

type Listener = (event: PlayerEvent) => void;

/** Live delivery to the player's open event streams, after each event is stored (never before its commit). */
export function createEventHub() {
  const listeners = new Map<string, Set<Listener>>();
  return {
    subscribe(userId: string, fn: Listener): () => void {
      let set = listeners.get(userId);
      if (!set) listeners.set(userId, (set = new Set()));
      set.add(fn);
      return () => {
        set.delete(fn);
        if (!set.size) listeners.delete(userId);
      };
    },
    /** Whether any of this relay's streams is listening to the player. */
    listening(userId: string): boolean {
      return listeners.has(userId);
    },
    publish(event: PlayerEvent) {
      listeners.get(event.userId)?.forEach((fn) => fn(event));
    },
  };
}

export type EventHub = ReturnType<typeof createEventHub>;
