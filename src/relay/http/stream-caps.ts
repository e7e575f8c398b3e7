import { DEFAULTS } from '../settings/schema.js';
import { RelayProblem } from './problems.js';

export interface StreamCapOptions {
  /** Open event streams per player (userId); 0: no cap. Default: RELAY_STREAMS_PER_PLAYER's (a few tabs and devices). */
  perPlayer?: number;
  /** Open event streams per client address; 0: no cap. Default: RELAY_STREAMS_PER_ADDRESS's (players behind one NAT). */
  perAddress?: number;
  /** What `Retry-After` says when a cap is reached. Default 10 s. */
  retryAfterSeconds?: number;
}

/**
 * Counts the event streams open on this relay, by player and by address, so one token or one
 * address cannot hold hundreds of sockets. In memory: each relay caps its own.
 */
export function createStreamCaps(o: StreamCapOptions = {}) {
  const perPlayer = o.perPlayer ?? DEFAULTS.streamsPerPlayer;
  const perAddress = o.perAddress ?? DEFAULTS.streamsPerAddress;
  const retryAfter = `${o.retryAfterSeconds ?? 10}`;
  const byPlayer = new Map<string, number>();
  const byAddress = new Map<string, number>();
  const add = (counts: Map<string, number>, key: string, n: number) => {
    const now = (counts.get(key) ?? 0) + n;
    if (now > 0) counts.set(key, now);
    else counts.delete(key);
  };
  const full = (counts: Map<string, number>, key: string, cap: number) => cap > 0 && (counts.get(key) ?? 0) >= cap;

  /** Throws 429 `rate_limited` where a stream would pass a cap. */
  function check(userId: string, address: string | undefined): void {
    if (full(byPlayer, userId, perPlayer))
      throw new RelayProblem('rate_limited', `This player has ${perPlayer} event streams open: close one first`, { 'Retry-After': retryAfter });
    if (address !== undefined && full(byAddress, address, perAddress)) {
      throw new RelayProblem('rate_limited', `This address has ${perAddress} event streams open: close one first`, { 'Retry-After': retryAfter });
    }
  }

  return {
    /** What a stream would be answered, with no place taken (HEAD). */
    check,
    /**
     * Takes a place for a stream, or throws 429 `rate_limited`. Returns how to give it back (once).
     * `address`: its addressKey; undefined (unknown) counts under the player only.
     */
    open(userId: string, address: string | undefined): () => void {
      check(userId, address);
      add(byPlayer, userId, 1);
      if (address !== undefined) add(byAddress, address, 1);
      let open = true;
      return function release() {
        if (!open) return;
        open = false;
        add(byPlayer, userId, -1);
        if (address !== undefined) add(byAddress, address, -1);
      };
    },
  };
}

export type StreamCaps = ReturnType<typeof createStreamCaps>;
