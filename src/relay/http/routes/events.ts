import { Hono } from 'hono';
import type { EventStreamTicket } from '../../../wire/relay-api.js';
import type { EventHub } from '../../core/live-events.js';
import type { EventLog, PlayerEvent } from '../../core/ports/event-log.js';
import type { StreamTickets } from '../../core/stream-tickets.js';
import { clientKey, type RelayEnv } from '../context.js';
import { RelayProblem } from '../problems.js';
import { type SseStream, sseStream } from '../sse-stream.js';
import { createStreamCaps, type StreamCaps } from '../stream-caps.js';

const HEARTBEAT_MS = 15_000;
/** Events read from the log at a time while a reconnecting stream catches up. */
const PAGE = 500;

/**
 * `GET /v1/events`: the player's events as Server-Sent Events. A reconnect with Last-Event-ID
 * (header, or `lastEventId` in the query) first gets everything it missed. Streams past the
 * caps (per player, per address) are 429. `POST /v1/events/ticket` (the token in the
 * Authorization header) hands out the single-use ticket a browser's EventSource opens it with.
 */
export function eventsRoute(events: EventLog, hub: EventHub, open: { inc(): void; dec(): void }, caps: StreamCaps = createStreamCaps(), tickets?: StreamTickets) {
  const app = new Hono<RelayEnv>();
  if (tickets) {
    app.post('/ticket', (c) => {
      // A bearer credential, if short-lived: no cache may keep it.
      c.header('Cache-Control', 'no-store');
      return c.json({ ticket: tickets.issue(c.get('player')), expiresIn: tickets.ttlSeconds } satisfies EventStreamTicket);
    });
  }
  return app.get('/', (c) => {
    const { userId } = c.get('player');
    const lastEventId = c.req.header('last-event-id') ?? c.req.query('lastEventId');
    // An id this relay never gave is not "replay everything": say so.
    if (lastEventId !== undefined && !/^\d{1,15}$/.test(lastEventId.trim())) throw new RelayProblem('bad_request', 'Last-Event-ID is an event id the relay sent');
    const after = Number(lastEventId ?? 0);
    const release = caps.open(userId, clientKey(c));
    // nginx (and proxies that follow it) pass the stream on as it is written, never buffered.
    c.header('X-Accel-Buffering', 'no');
    c.header('Content-Type', 'text/event-stream');
    c.header('Cache-Control', 'no-cache');
    c.header('Connection', 'keep-alive');
    c.header('Transfer-Encoding', 'chunked');
    const stream = sseStream();
    open.inc();
    stream.onAbort(() => open.dec());
    stream.onAbort(release);
    follow(stream)
      .catch((err: unknown) => console.error(err))
      .finally(() => {
        release();
        stream.close();
      });
    return c.body(stream.body);

    async function follow(stream: SseStream) {
      let lastSent = after;
      let wake: (() => void) | undefined;
      const live: PlayerEvent[] = [];
      // Subscribe before reading the backlog, so nothing falls between the two.
      const unsubscribe = hub.subscribe(userId, (e) => {
        live.push(e);
        wake?.();
      });
      stream.onAbort(() => {
        unsubscribe();
        wake?.();
      });
      const send = async (e: PlayerEvent) => {
        if (e.id <= lastSent) return;
        lastSent = e.id;
        await stream.writeSSE({ id: String(e.id), event: e.type, data: JSON.stringify(e.data) });
      };
      // A first connection starts from now; a reconnection (any Last-Event-ID, 0 for all) gets
      // everything it missed, page after page.
      if (lastEventId !== undefined) {
        for (let page = await events.since(userId, after, PAGE); page.length && !stream.aborted; page = await events.since(userId, lastSent, PAGE)) {
          for (const e of page) await send(e);
          if (page.length < PAGE) break;
        }
      }
      while (!stream.aborted) {
        while (live.length) await send(live.shift()!);
        const timedOut = await new Promise<boolean>((resolve) => {
          const t = setTimeout(() => resolve(true), HEARTBEAT_MS);
          wake = () => {
            clearTimeout(t);
            resolve(false);
          };
        });
        wake = undefined;
        if (timedOut && !stream.aborted) await stream.write(': keep-alive\n\n');
      }
      unsubscribe();
    }
  });
}
