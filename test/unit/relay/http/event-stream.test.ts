import { EventEmitter } from 'node:events';
import { Hono } from 'hono';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEventHub } from '../../../../src/relay/core/live-events.js';
import type { PlayerClaims } from '../../../../src/relay/core/player-tokens.js';
import type { EventLog, PlayerEvent } from '../../../../src/relay/core/ports/event-log.js';
import type { RelayEnv } from '../../../../src/relay/http/context.js';
import { createKeepAlives } from '../../../../src/relay/http/event-stream/keep-alives.js';
import { problemResponse, RelayProblem } from '../../../../src/relay/http/problems.js';
import { eventsRoute, KEEP_ALIVE_MS } from '../../../../src/relay/http/routes/events.js';
import { createStreamCaps } from '../../../../src/relay/http/stream-caps.js';

const KEEP_ALIVE = ': keep-alive\n\n';

/** Node's ServerResponse as far as the route uses it; `accept` false: the client is behind. */
class FakeOutgoing extends EventEmitter {
  head: { status: number; headers: Record<string, string> } | undefined;
  chunks: string[] = [];
  accept = true;
  writableEnded = false;
  destroyed = false;
  writeHead(status: number, headers: Record<string, string>) {
    this.head = { status, headers };
  }
  flushHeaders() {}
  write(text: string) {
    this.chunks.push(text);
    return this.accept;
  }
  end() {
    this.writableEnded = true;
    this.emit('close');
  }
  /** The client goes away. */
  gone() {
    this.destroyed = true;
    this.emit('close');
  }
}

let n = 0;
const event = (userId = 'u1'): PlayerEvent => ({ id: ++n, userId, type: 'reward', data: { n }, createdAt: 0 });

function setUp(backlog: PlayerEvent[] = []) {
  const hub = createEventHub();
  const gauge = { open: 0, inc: () => gauge.open++, dec: () => gauge.open-- };
  const keepAlives = createKeepAlives(KEEP_ALIVE_MS, () => Date.now());
  const events = { since: async (_u: string, after: number) => backlog.filter((e) => e.id > after) } as unknown as EventLog;
  const app = new Hono<RelayEnv>();
  app.use('*', async (c, next) => {
    c.set('player', { userId: c.req.header('x-user') ?? 'u1', gamertag: 'one', exp: Date.now() + 60_000 } as PlayerClaims);
    c.set('clientKey', 'here');
    c.header('X-Content-Type-Options', 'nosniff');
    await next();
  });
  app.onError((err, c) => (err instanceof RelayProblem ? problemResponse(c, err) : c.text(String(err), 500)));
  app.route('/v1/events', eventsRoute(events, hub, gauge, createStreamCaps({ perPlayer: 1, perAddress: 0 }), undefined, keepAlives));
  const open = async (out?: FakeOutgoing, headers: Record<string, string> = {}) =>
    app.fetch(new Request('http://relay.test/v1/events', { headers }), out ? ({ outgoing: out } as unknown as RelayEnv['Bindings']) : undefined);
  return { hub, gauge, keepAlives, open };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("an event stream written to Node's response", () => {
  it('writes its head with every header at once, its events as they come, and a keep-alive after 15 s of silence only', async () => {
    const { hub, open } = setUp();
    const out = new FakeOutgoing();
    const answer = await open(out);
    // @hono/node-server's RESPONSE_ALREADY_SENT: it writes nothing more itself.
    expect(answer.headers.get('x-hono-already-sent')).toBe('true');
    expect(out.head?.status).toBe(200);
    expect(out.head?.headers).toMatchObject({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-content-type-options': 'nosniff' });

    await vi.advanceTimersByTimeAsync(14_000);
    expect(out.chunks).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(out.chunks).toEqual([KEEP_ALIVE]);

    // An event resets the silence: the next keep-alive is 15 s after it.
    const e = event();
    hub.publish(e);
    expect(out.chunks.at(-1)).toBe(`event: reward\ndata: {"n":${e.id}}\nid: ${e.id}\n\n`);
    await vi.advanceTimersByTimeAsync(14_000);
    expect(out.chunks).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(out.chunks).toEqual([KEEP_ALIVE, expect.stringContaining('event: reward'), KEEP_ALIVE]);
  });

  it('keeps many streams on one clock, each its keep-alive 15 s after its own last write', async () => {
    const { keepAlives, open } = setUp();
    const a = new FakeOutgoing();
    await open(a);
    // Another player's stream, opened 5 s later.
    await vi.advanceTimersByTimeAsync(5_000);
    const b = new FakeOutgoing();
    await open(b, { 'x-user': 'u2' });
    expect(keepAlives.size).toBe(2);
    await vi.advanceTimersByTimeAsync(10_000);
    expect([a.chunks, b.chunks]).toEqual([[KEEP_ALIVE], []]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect([a.chunks, b.chunks]).toEqual([[KEEP_ALIVE], [KEEP_ALIVE]]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect([a.chunks, b.chunks]).toEqual([[KEEP_ALIVE, KEEP_ALIVE], [KEEP_ALIVE]]);
  });

  it('writes nothing more while the client is behind, then what waited, in order, once it drains', async () => {
    const { hub, open } = setUp();
    const out = new FakeOutgoing();
    await open(out);
    out.accept = false;
    const [e1, e2, e3] = [event(), event(), event()];
    hub.publish(e1);
    hub.publish(e2);
    hub.publish(e3);
    // The first write filled the socket's buffer: the others wait, and so does any keep-alive.
    expect(out.chunks).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(KEEP_ALIVE_MS * 2);
    expect(out.chunks).toHaveLength(1);
    out.accept = true;
    out.emit('drain');
    expect(out.chunks.map((c) => /id: (\d+)/.exec(c)?.[1])).toEqual([e1, e2, e3].map((e) => String(e.id)));
  });

  it('a reconnection gets what it missed first, then live events, each once', async () => {
    const missed = [event(), event()];
    const { hub, open } = setUp(missed);
    const out = new FakeOutgoing();
    await open(out, { 'last-event-id': String(missed[0]!.id - 1) });
    // Told live of the second again, and of a new one, while the backlog is read.
    const live = event();
    hub.publish(missed[1]!);
    hub.publish(live);
    await vi.advanceTimersByTimeAsync(0);
    expect(out.chunks.map((c) => /id: (\d+)/.exec(c)?.[1])).toEqual([...missed, live].map((e) => String(e.id)));
  });

  it('lets go of a stream whose client went away: its hub listener, its keep-alives, its place under the caps and the gauge', async () => {
    const { hub, gauge, keepAlives, open } = setUp();
    const out = new FakeOutgoing();
    await open(out);
    expect([gauge.open, keepAlives.size, hub.listening('u1')]).toEqual([1, 1, true]);
    // The cap is one stream a player: a second is refused while the first is open.
    expect((await open(new FakeOutgoing())).status).toBe(429);
    out.gone();
    expect([gauge.open, keepAlives.size, hub.listening('u1')]).toEqual([0, 0, false]);
    hub.publish(event());
    await vi.advanceTimersByTimeAsync(KEEP_ALIVE_MS * 2);
    expect(out.chunks).toEqual([]);
    const again = new FakeOutgoing();
    await open(again);
    expect(again.head?.status).toBe(200);
  });

  it('a response ended by the shutdown is written to no more (a write after end would be an error on it)', async () => {
    const { gauge, open } = setUp();
    const out = new FakeOutgoing();
    await open(out);
    out.writableEnded = true;
    await vi.advanceTimersByTimeAsync(KEEP_ALIVE_MS);
    expect(out.chunks).toEqual([]);
    out.emit('close');
    expect(gauge.open).toBe(0);
  });
});

describe('an event stream without Node (a web stream body)', () => {
  it('says the same: its events, then a keep-alive after 15 s; cancelled, it lets go', async () => {
    const { hub, gauge, keepAlives, open } = setUp();
    const answer = await open();
    expect(answer.headers.get('content-type')).toBe('text/event-stream');
    const reader = answer.body!.getReader();
    const text = async () => new TextDecoder().decode((await reader.read()).value);
    const e = event();
    hub.publish(e);
    expect(await text()).toContain(`id: ${e.id}`);
    await vi.advanceTimersByTimeAsync(KEEP_ALIVE_MS);
    expect(await text()).toBe(KEEP_ALIVE);
    await reader.cancel();
    expect([gauge.open, keepAlives.size, hub.listening('u1')]).toEqual([0, 0, false]);
  });
});
