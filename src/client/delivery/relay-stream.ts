import type { PlayerSession, RewardRecord } from '../../wire/relay-api.js';
import type { RewardBusEvents } from '../events.js';
import { backoffDelay } from './backoff.js';
import type { RelayClient } from './relay-client.js';

export interface RelayStreamHandlers {
  reward(record: RewardRecord): void;
  completed: RewardBusEvents['ramp:completed'];
  failed: RewardBusEvents['ramp:failed'];
  /**
   * A connection opened where events may have been missed: the player's stream listened before
   * (cut, or on a lapsed token) and heard no event to resume after, so this one starts from now.
   * Said at most once every 30 s: those opened within that are said together as it ends.
   */
  missed?(): void;
}

/** An EventSource class: the browser's, or one for runtimes without it (Node 20). */
export type EventSourceClass = new (url: string) => EventSource;

/**
 * Listens to an event stream (`GET /v1/events`) at `url`, where there is an EventSource.
 * `heard` gets each message's id, to resume from.
 */
export function listenToRelay(
  url: string,
  on: RelayStreamHandlers,
  Source: EventSourceClass | undefined = globalThis.EventSource,
  heard?: (id: string) => void,
): EventSource | undefined {
  if (!Source) return undefined;
  const stream = new Source(url);
  const data = <T>(m: Event) => {
    const { lastEventId } = m as MessageEvent<string>;
    if (lastEventId) heard?.(lastEventId);
    return JSON.parse((m as MessageEvent<string>).data) as T;
  };
  stream.addEventListener('reward', (m) => on.reward(data(m)));
  stream.addEventListener('ramp.purchase.completed', (m) => on.completed(data(m)));
  stream.addEventListener('ramp.purchase.failed', (m) => on.failed(data(m)));
  return stream;
}

/** Reconnections after an error wait 1 s, then longer, up to this. */
const RECONNECT_MAX_MS = 30_000;
/** `missed` at most this often: a stream that opens and is cut at once, over and over, reads the history once a period, not per reconnection. */
const MISSED_EVERY_MS = 30_000;

/**
 * The linked player's stream, kept on the player's current token: a renewed token reopens it.
 *
 * Each connection opens with a single-use ticket (`POST /v1/events/ticket`), never the player's
 * token in the URL, where access logs would keep it. A ticket opens one connection only, so the
 * browser's own reconnection (same URL) cannot work: on an error this closes the stream and opens
 * a new one with a new ticket, resuming after the last event heard (none heard: `missed` once it
 * is open, for the caller to read what it missed elsewhere). A relay without tickets
 * (before 0.3) gets the token in the URL, as before. The relay ends a stream when its token
 * lapses: the next ticket is refused (401), and the player's session is renewed (`renew`), as a
 * refused claim's is; the renewed token reopens the stream.
 */
export class PlayerStream {
  #stream: EventSource | undefined;
  #token: string | undefined;
  /** Whose stream it is: opened again for the same player, it resumes. */
  #userId: string | undefined;
  #lastEventId: string | undefined;
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Which open() a connection under way belongs to: one that is no longer current opens nothing. */
  #generation = 0;
  /** The player's stream listened before this connection: events may have been said in between. */
  #gap = false;
  /** When `missed` may be said again (performance.now()), and the timer that says it then. */
  #missedDue = Number.NEGATIVE_INFINITY;
  #missedTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly relay: Pick<RelayClient, 'eventTicket' | 'eventsUrl' | 'eventsUrlWithToken'>,
    private readonly on: RelayStreamHandlers,
    /** `false`: no stream at all. */
    private readonly Source: EventSourceClass | false | undefined,
    /** The relay refused this player's token: renew the session (a renewed one comes back through renewed()). */
    private readonly renew?: (userId: string) => void,
  ) {}

  /** Listens for this player, and for no one else. */
  open(player: PlayerSession | undefined) {
    // The same player again (a renewed token, a link again): resume after the last event heard,
    // or what was said in between is lost. Another player's stream starts from now.
    const same = player !== undefined && player.userId === this.#userId;
    const resume = same ? this.#lastEventId : undefined;
    // A read owed for a gap before this (held back by MISSED_EVERY_MS) is still owed on the new token.
    const owed = same && this.#missedTimer !== undefined;
    this.close();
    this.#token = player?.token;
    this.#userId = player?.userId;
    this.#lastEventId = resume;
    this.#gap = same;
    // The same player's renewed token keeps the backoff: a relay that refused each new token
    // would otherwise be asked for a link again at once, every time.
    if (!same) {
      this.#attempt = 0;
      this.#missedDue = Number.NEGATIVE_INFINITY;
    }
    if (player && this.Source !== false && (this.Source ?? globalThis.EventSource)) void this.#connect(player.token, this.#generation);
    if (owed) this.#missed();
  }

  /** The streamed player's session was renewed: listen on its new token. */
  renewed(player: PlayerSession) {
    if (player.token !== this.#token) this.open(player);
  }

  close() {
    this.#generation++;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    // Opened again for the same player, it says `missed` again when its connection opens.
    clearTimeout(this.#missedTimer);
    this.#missedTimer = undefined;
    this.#token = undefined;
    this.#drop();
  }

  #drop() {
    this.#stream?.close();
    this.#stream = undefined;
  }

  async #connect(token: string, generation: number) {
    const url = await this.#url(token);
    // Closed or opened again since (another player, a renewed token): this one is no longer wanted.
    if (generation !== this.#generation) return;
    if (url === 'lapsed') return this.#renewAfterBackoff(generation);
    if (url === 'later') return this.#reconnect(token, generation);
    // Resumed after the last event heard, the relay says what was missed; from now, it does not.
    const missed = this.#gap && this.#lastEventId === undefined;
    const stream = listenToRelay(url, this.on, this.Source || undefined, (id) => (this.#lastEventId = id));
    if (!stream) return;
    this.#stream = stream;
    stream.addEventListener('open', () => {
      this.#attempt = 0;
      if (this.#stream !== stream) return;
      this.#gap = false;
      // Read once this stream is live, so what comes after is heard on it.
      if (missed) this.#missed();
    });
    stream.addEventListener('error', () => {
      if (this.#stream !== stream) return;
      this.#drop();
      this.#reconnect(token, generation);
    });
  }

  /** Says `missed` now, or once MISSED_EVERY_MS have passed since the last: a read then covers every gap since. */
  #missed() {
    const wait = this.#missedDue - performance.now();
    if (wait <= 0) {
      this.#missedDue = performance.now() + MISSED_EVERY_MS;
      return this.on.missed?.();
    }
    this.#missedTimer ??= setTimeout(() => {
      this.#missedTimer = undefined;
      this.#missed();
    }, wait);
    (this.#missedTimer as { unref?: () => void }).unref?.();
  }

  #reconnect(token: string, generation: number) {
    this.#gap = true;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#connect(token, generation), backoffDelay(this.#attempt++, { baseMs: 1000, maxMs: RECONNECT_MAX_MS }));
    // Under Node a reconnection to come does not hold the process open by itself.
    (this.#timer as { unref?: () => void }).unref?.();
  }

  #renewAfterBackoff(generation: number) {
    const { renew } = this;
    const userId = this.#userId;
    if (!renew || !userId) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => generation === this.#generation && renew(userId), backoffDelay(this.#attempt++, { baseMs: 1000, maxMs: RECONNECT_MAX_MS }));
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** The URL for one connection; `later` to try again, `lapsed` when the token no longer opens anything. */
  async #url(token: string): Promise<string | 'later' | 'lapsed'> {
    const a = await this.relay.eventTicket(token);
    if (a.ok) return this.relay.eventsUrl(a.body.ticket, this.#lastEventId);
    // A relay before tickets: the token in the URL, as it takes it.
    if (a.status === 404 || a.status === 405) return this.relay.eventsUrlWithToken(token, this.#lastEventId);
    // The token lapsed (or the relay's secret changed): its session is renewed, which reopens the stream.
    if (a.status === 401) return 'lapsed';
    return 'later';
  }
}
