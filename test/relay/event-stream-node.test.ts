import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventStreamTicket } from '../../src/wire/relay-api.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const TOKEN = `admin-${randomUUID()}`;
let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

const openStreams = async () => {
  const text = await (await fetch(`${relay!.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  return Number(/^rewardbus_event_streams_open (\S+)$/m.exec(text)?.[1]);
};

/** A stream read off a raw socket: the bytes exactly as the relay wrote them to Node's response. */
function rawStream(token: string) {
  const { port } = new URL(relay!.url);
  const socket = connect({ host: '127.0.0.1', port: Number(port) });
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (received += d));
  socket.on('error', () => undefined);
  socket.write(`GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`);
  return { socket, received: () => received };
}

describe("an event stream on Node's response, over real HTTP", () => {
  it('answers its head at once with every header, hears a payout, and frees its place when the client leaves', async () => {
    relay = await startTestRelay({ RELAY_ADMIN_TOKEN: TOKEN }, { relay: { streamCaps: { perPlayer: 1, perAddress: 0 } } });
    const player = await relay.link('raw-listener');
    const s = rawStream(player.token);
    await expect.poll(() => s.received(), { timeout: 5000 }).toMatch(/\r\n\r\n/);
    const head = s.received().split('\r\n\r\n')[0]!.toLowerCase();
    expect(head).toMatch(/^http\/1\.1 200 ok/);
    for (const line of ['content-type: text/event-stream', 'cache-control: no-cache', 'transfer-encoding: chunked', 'x-accel-buffering: no', 'x-content-type-options: nosniff'])
      expect(head).toContain(line);
    expect(head).not.toContain('x-hono-already-sent');
    expect(await openStreams()).toBe(1);

    const claim = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(claim.body.status).toBe('paid');
    await expect.poll(() => s.received(), { timeout: 5000 }).toContain(`"id":"${claim.body.id}"`);

    // The player's cap is one stream: a second is refused while this one is open…
    expect((await fetch(`${relay.url}/v1/events`, { headers: { authorization: `Bearer ${player.token}` } })).status).toBe(429);
    // …and the relay lets go of it as soon as its client leaves.
    s.socket.destroy();
    await expect.poll(openStreams, { timeout: 5000 }).toBe(0);
    const again = rawStream(player.token);
    await expect.poll(() => again.received(), { timeout: 5000 }).toMatch(/^HTTP\/1\.1 200/);
    again.socket.destroy();
  });

  it('answers HEAD with a stream’s head and opens no stream: no place taken, nothing written after it, 429 past a cap', async () => {
    relay = await startTestRelay({ RELAY_ADMIN_TOKEN: TOKEN }, { relay: { streamCaps: { perPlayer: 1, perAddress: 0 } } });
    const player = await relay.link('head-asker');
    // @hono/node-server says so on the console when a handler writes a head twice.
    const logged = vi.spyOn(console, 'error');
    const head = await fetch(`${relay.url}/v1/events`, { method: 'HEAD', headers: { authorization: `Bearer ${player.token}` } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/event-stream');
    expect(await openStreams()).toBe(0);
    // The player's one place is still free: a real stream opens.
    const s = rawStream(player.token);
    await expect.poll(() => s.received(), { timeout: 5000 }).toMatch(/^HTTP\/1\.1 200/);
    expect(await openStreams()).toBe(1);
    // With it taken, HEAD answers what a GET would: 429, with when to ask again.
    const full = await fetch(`${relay.url}/v1/events`, { method: 'HEAD', headers: { authorization: `Bearer ${player.token}` } });
    expect(full.status).toBe(429);
    expect(full.headers.get('retry-after')).toBe('10');
    s.socket.destroy();
    expect(logged).not.toHaveBeenCalled();
    logged.mockRestore();
  });

  it('ends when the token that opened it expires, by header or by ticket: its client must come back with a live token', async () => {
    relay = await startTestRelay({ RELAY_ADMIN_TOKEN: TOKEN }, { relay: { tokenTtlMs: 2_000 } });
    const player = await relay.link('lapsing');
    const auth = { authorization: `Bearer ${player.token}` };
    const { ticket } = (await (await fetch(`${relay.url}/v1/events/ticket`, { method: 'POST', headers: auth })).json()) as EventStreamTicket;
    const exp = Date.parse(player.expiresAt);
    const ended = [fetch(`${relay.url}/v1/events`, { headers: auth }), fetch(`${relay.url}/v1/events?ticket=${encodeURIComponent(ticket)}`)].map(async (answer) => {
      const r = await answer;
      expect(r.status).toBe(200);
      const stillOpen = new Promise<'still open'>((resolve) => setTimeout(resolve, exp + 2_000 - Date.now(), 'still open'));
      return Promise.race([r.text().then(() => Date.now()), stillOpen]);
    });
    await expect.poll(openStreams).toBe(2);
    for (const at of await Promise.all(ended)) {
      expect(at).toBeTypeOf('number');
      expect(at).toBeGreaterThanOrEqual(exp - 50);
    }
    await expect.poll(openStreams).toBe(0);
    // Lapsed, the token opens no stream and gets no ticket: the client links again.
    expect((await fetch(`${relay.url}/v1/events`, { headers: auth })).status).toBe(401);
    expect((await fetch(`${relay.url}/v1/events/ticket`, { method: 'POST', headers: auth })).status).toBe(401);
  }, 15_000);
});
