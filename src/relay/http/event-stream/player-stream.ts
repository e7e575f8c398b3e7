import type { EventHub } from '../../core/live-events.js';
import type { EventLog, PlayerEvent } from '../../core/ports/event-log.js';
import type { KeepAliveStream, KeepAlives } from './keep-alives.js';
import type { EventSink, SinkListener } from './sink.js';

/** Events read from the log at a time while a reconnecting stream catches up. */
const PAGE = 500;
const KEEP_ALIVE = ': keep-alive\n\n';
/**
 * The text that may wait for one stream (its client behind, or its backlog being read), in
 * characters. Past it the connection is cut: a client that never reads would otherwise hold every
 * event its player gets, for as long as it keeps the socket open. It loses nothing: back with its
 * Last-Event-ID, it reads the rest from the log.
 */
const MAX_WAITING_CHARS = 1 << 20;

/** One Server-Sent Event, as Hono's writeSSE writes it: each line of the data its own `data:` line. */
export const sseText = (e: PlayerEvent): string =>
  `event: ${e.type}\n${JSON.stringify(e.data)
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}`)
    .join('\n')}\nid: ${e.id}\n\n`;

/**
 * One player's open event stream: the events the hub tells it of, after those it missed when it
 * reconnected, each sent once and in order; a keep-alive from the shared clock when silent.
 * Driven by what happens (an event, the client reading, the clock), with no loop or timer of its
 * own: this object, its hub listener and its sink are what an open stream holds.
 */
export class PlayerStream implements KeepAliveStream, SinkListener {
  lastWrite = 0;
  #sink: EventSink | undefined;
  #lastSent: number;
  /** Events waiting (as their text) while the backlog is read or the client is behind; undefined: send at once. */
  #waiting: Array<{ id: number; text: string }> | undefined;
  /** The length of the text waiting. */
  #waitingChars = 0;
  #catchingUp = false;
  #behind = false;
  #closed = false;
  #onDrained: (() => void) | undefined;
  #unsubscribe: () => void;

  constructor(
    readonly userId: string,
    after: number,
    hub: EventHub,
    private readonly keepAlives: KeepAlives,
    private readonly onClose: () => void,
  ) {
    this.#lastSent = after;
    // Subscribed before the backlog is read, so nothing falls between the two.
    this.#unsubscribe = hub.subscribe(userId, (e) => this.#hear(e));
  }

  /** Starts writing to `sink`; with `backlog`, first everything after the Last-Event-ID, page after page. */
  start(sink: EventSink, backlog?: EventLog): void {
    this.#sink = sink;
    if (this.#closed) return;
    this.keepAlives.wrote(this);
    if (!backlog) return;
    this.#catchingUp = true;
    this.#waiting ??= [];
    this.#catchUp(backlog).then(
      () => {
        this.#catchingUp = false;
        this.#flush();
      },
      (err: unknown) => {
        console.error(err);
        this.end();
      },
    );
  }

  /** False once the client went away or the stream ended. */
  get open(): boolean {
    return !this.#closed;
  }

  keepAlive(): void {
    if (!this.#behind) this.#write(KEEP_ALIVE);
  }

  drained(): void {
    if (!this.#behind) return;
    this.#behind = false;
    const resume = this.#onDrained;
    this.#onDrained = undefined;
    if (resume) resume();
    else this.#flush();
  }

  closed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#waiting = undefined;
    this.#waitingChars = 0;
    this.keepAlives.remove(this);
    this.#unsubscribe();
    this.#onDrained?.();
    this.onClose();
  }

  /** Ends the response (the client reconnects with its Last-Event-ID) and lets the stream go. */
  end(): void {
    if (this.#sink) this.#sink.end();
    this.closed();
  }

  #hear(e: PlayerEvent): void {
    if (this.#closed) return;
    const text = sseText(e);
    if (!this.#waiting) {
      this.#send(e.id, text);
      return;
    }
    this.#waiting.push({ id: e.id, text });
    this.#waitingChars += text.length;
    if (this.#waitingChars > MAX_WAITING_CHARS) {
      this.#sink?.drop();
      this.closed();
    }
  }

  #send(id: number, text: string): void {
    if (id <= this.#lastSent) return;
    this.#lastSent = id;
    this.#write(text);
  }

  #write(text: string): void {
    if (this.#closed || !this.#sink) return;
    if (!this.#sink.write(text)) {
      // Nothing more until the client reads: what comes meanwhile waits here, as it did in the loop.
      this.#behind = true;
      this.#waiting ??= [];
    }
    this.keepAlives.wrote(this);
  }

  /** Sends what waited, until the client is behind again; then live events go straight out. */
  #flush(): void {
    const waiting = this.#waiting;
    if (!waiting || this.#catchingUp) return;
    while (waiting.length && !this.#behind && !this.#closed) {
      const { id, text } = waiting.shift()!;
      this.#waitingChars -= text.length;
      this.#send(id, text);
    }
    if (!this.#behind) {
      this.#waiting = undefined;
      this.#waitingChars = 0;
    }
  }

  async #catchUp(events: EventLog): Promise<void> {
    for (let page = await events.since(this.userId, this.#lastSent, PAGE); page.length && !this.#closed; page = await events.since(this.userId, this.#lastSent, PAGE)) {
      for (const e of page) {
        if (this.#behind) await new Promise<void>((resolve) => (this.#onDrained = resolve));
        if (this.#closed) return;
        this.#send(e.id, sseText(e));
      }
      if (page.length < PAGE) break;
    }
  }
}
