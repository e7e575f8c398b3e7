import type { EventHub } from '../../core/live-events.js';
import type { EventLog, PlayerEvent } from '../../core/ports/event-log.js';
import type { KeepAliveStream, KeepAlives } from './keep-alives.js';
import type { EventSink, SinkListener } from './sink.js';

/** Events read from the log at a time while a reconnecting stream catches up. */
const PAGE = 500;
const KEEP_ALIVE = ': keep-alive\n\n';

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
  /** Events waiting while the backlog is read or the client is behind; undefined: send at once. */
  #waiting: PlayerEvent[] | undefined;
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
    if (this.#waiting) this.#waiting.push(e);
    else this.#send(e);
  }

  #send(e: PlayerEvent): void {
    if (e.id <= this.#lastSent) return;
    this.#lastSent = e.id;
    this.#write(sseText(e));
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
    while (waiting.length && !this.#behind && !this.#closed) this.#send(waiting.shift()!);
    if (!this.#behind) this.#waiting = undefined;
  }

  async #catchUp(events: EventLog): Promise<void> {
    for (let page = await events.since(this.userId, this.#lastSent, PAGE); page.length && !this.#closed; page = await events.since(this.userId, this.#lastSent, PAGE)) {
      for (const e of page) {
        if (this.#behind) await new Promise<void>((resolve) => (this.#onDrained = resolve));
        if (this.#closed) return;
        this.#send(e);
      }
      if (page.length < PAGE) break;
    }
  }
}
