import type { PlayerSession, RewardRecord } from '../wire/relay-api.js';
import type { RewardBusEvents } from './events.js';

export interface RelayStreamHandlers {
  reward(record: RewardRecord): void;
  completed: RewardBusEvents['ramp:completed'];
  failed: RewardBusEvents['ramp:failed'];
}

/** An EventSource class: the browser's, or one for runtimes without it (Node 20). */
export type EventSourceClass = new (url: string) => EventSource;

/**
 * The player's event stream from the relay (`GET /v1/events`), where there is an EventSource.
 * It reconnects by itself and resumes from the last event id it saw.
 */
export function listenToRelay(url: string, on: RelayStreamHandlers, Source: EventSourceClass | undefined = globalThis.EventSource): EventSource | undefined {
  if (!Source) return undefined;
  const stream = new Source(url);
  const data = <T>(m: Event) => JSON.parse((m as MessageEvent<string>).data) as T;
  stream.addEventListener('reward', (m) => on.reward(data(m)));
  stream.addEventListener('ramp.purchase.completed', (m) => on.completed(data(m)));
  stream.addEventListener('ramp.purchase.failed', (m) => on.failed(data(m)));
  return stream;
}

/**
 * The linked player's stream, kept on the player's current token: a renewed token reopens it
 * (the relay ends a stream whose token lapsed).
 */
export class PlayerStream {
  #stream: EventSource | undefined;
  #token: string | undefined;

  constructor(
    private readonly url: (token: string) => string,
    private readonly on: RelayStreamHandlers,
    /** `false`: no stream at all. */
    private readonly Source: EventSourceClass | false | undefined,
  ) {}

  /** Listens for this player, and for no one else. */
  open(player: PlayerSession | undefined) {
    this.close();
    this.#token = player?.token;
    if (player && this.Source !== false) this.#stream = listenToRelay(this.url(player.token), this.on, this.Source);
  }

  /** The streamed player's session was renewed: listen on its new token. */
  renewed(player: PlayerSession) {
    if (player.token !== this.#token) this.open(player);
  }

  close() {
    this.#stream?.close();
    this.#stream = undefined;
  }
}
