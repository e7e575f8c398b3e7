import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono } from 'hono';
import type { EventStreamTicket } from '../../../wire/relay-api.js';
import type { EventHub } from '../../core/live-events.js';
import type { EventLog } from '../../core/ports/event-log.js';
import type { StreamTickets } from '../../core/stream-tickets.js';
import { clientKey, nodeOutgoing, type RelayEnv } from '../context.js';
import { createKeepAlives, type KeepAlives } from '../event-stream/keep-alives.js';
import { nodeSink } from '../event-stream/node-sink.js';
import { PlayerStream } from '../event-stream/player-stream.js';
import { webSink } from '../event-stream/web-sink.js';
import { RelayProblem } from '../problems.js';
import { createStreamCaps, type StreamCaps } from '../stream-caps.js';

// nginx (and proxies that follow it) pass the stream on as it is written, never buffered.
const streamHeaders = { 'X-Accel-Buffering': 'no', 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' };

/** A stream silent this long gets a keep-alive comment (proxies and browsers drop idle connections). */
export const KEEP_ALIVE_MS = 15_000;
/** setTimeout's longest delay (about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `GET /v1/events`: the player's events as Server-Sent Events. A reconnect with Last-Event-ID
 * (header, or `lastEventId` in the query) first gets everything it missed. Streams past the
 * caps (per player, per address) are 429. `POST /v1/events/ticket` (the token in the
 * Authorization header) hands out the single-use ticket a browser's EventSource opens it with.
 */
export function eventsRoute(
  events: EventLog,
  hub: EventHub,
  open: { inc(): void; dec(): void },
  caps: StreamCaps = createStreamCaps(),
  tickets?: StreamTickets,
  keepAlives: KeepAlives = createKeepAlives(KEEP_ALIVE_MS),
  /** The streams open now, each until it closes: the relay's close() ends them. */
  live: Set<PlayerStream> = new Set(),
) {
  const app = new Hono<RelayEnv>();
  if (tickets) {
    app.post('/ticket', (c) => {
      // A bearer credential, if short-lived: no cache may keep it.
      c.header('Cache-Control', 'no-store');
      return c.json({ ticket: tickets.issue(c.get('player')), expiresIn: tickets.ttlSeconds } satisfies EventStreamTicket);
    });
  }
  return app.get('/', async (c) => {
    const { userId, exp } = c.get('player');
    const lastEventId = c.req.header('last-event-id') ?? c.req.query('lastEventId');
    // An id this relay never gave is not "replay everything": say so.
    if (lastEventId !== undefined && !/^\d{1,15}$/.test(lastEventId.trim())) throw new RelayProblem('bad_request', 'Last-Event-ID is an event id the relay sent');
    // HEAD asks what a stream would answer: its head (429 past a cap), and no stream (no place
    // under the caps, and its ticket left unused: requirePlayer only peeks at it). Hono answers HEAD
    // with GET's response less its body, which a stream written to Node's response would already have sent.
    if (c.req.method === 'HEAD') {
      caps.check(userId, clientKey(c));
      return c.body(null, 200, streamHeaders);
    }
    // A first connection starts from now. On a ledger shared by relays, the listener reads a player
    // it has no stream for from where it started: the stream starts after the player's latest event
    // instead (read before it subscribes, and caught up from there, so nothing committed meanwhile is missed).
    const latest = lastEventId === undefined ? await events.latestId?.(userId) : undefined;
    const release = caps.open(userId, clientKey(c));
    for (const [name, value] of Object.entries(streamHeaders)) c.header(name, value);
    c.header('Transfer-Encoding', 'chunked');
    open.inc();
    const stream = new PlayerStream(userId, Number(lastEventId ?? latest ?? 0), hub, keepAlives, () => {
      clearTimeout(lapses);
      live.delete(stream);
      release();
      open.dec();
    });
    live.add(stream);
    // The stream ends when the token that authorized it (itself, or the one its ticket was issued
    // from) expires: the client reconnects, and must come with a live token or ticket. One timer a
    // stream, unref'd (the socket holds the process, not this) and cleared on close: Node keeps
    // timers in lists by delay under a priority queue, so 10,000 open streams cost little, and no
    // sweep reads them all.
    // A token outliving setTimeout's 24.8 days ends its stream then, and the client reconnects.
    const lapses = setTimeout(() => stream.end(), Math.min(MAX_TIMER_MS, Math.max(0, exp - Date.now())));
    (lapses as { unref?: () => void }).unref?.();
    // A first connection starts from now; a reconnection (any Last-Event-ID, 0 for all) first
    // gets everything it missed.
    const backlog = lastEventId !== undefined || latest !== undefined ? events : undefined;
    const out = nodeOutgoing(c.env);
    if (out) {
      // Under Node: written to the response itself, with the headers every answer gets.
      const headers: Record<string, string> = {};
      c.newResponse(null).headers.forEach((value, name) => {
        headers[name] = value;
      });
      stream.start(nodeSink(out, headers, stream), backlog);
      return RESPONSE_ALREADY_SENT;
    }
    const sink = webSink(stream);
    stream.start(sink, backlog);
    return c.body(sink.body);
  });
}
