// A client that opens its event stream and never reads it, over real HTTP with a real SQLite file:
// once the socket's buffers are full, what the relay keeps waiting for it is bounded; past that the
// relay cuts the connection (its place under the caps and its socket freed), and the client, back
// with its Last-Event-ID, gets every event it had not read from the log: none is lost.
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventLog } from '../../src/relay/core/ports/event-log.js';
import type { RelayStore } from '../../src/relay/core/ports/relay-store.js';
import { openSqliteStore } from '../../src/relay/index.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';
import { readSse } from '../helpers/sse.js';

const SECRET = 'slow-reader-secret';
const ADMIN = 'slow-reader-admin-token-0123456789abcdef';
let relay: TestRelay | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const openStreams = async () => {
  const text = await (await fetch(`${relay!.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  return Number(/^rewardbus_event_streams_open (\S+)$/m.exec(text)?.[1]);
};

/** The padding each purchase event carries to its player: ~60 KB of text. */
const pad = (n: number) => `${n}`.padEnd(60_000, '0');

/**
 * A real SQLite store whose purchase events each carry `pad`: a webhook's fields are checked and
 * short (webhook-amounts.test.ts), so no delivery makes an event this size any more. Streams, the
 * log and the hub are the relay's own.
 */
function paddingStore(): RelayStore {
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-slow-'));
  dirs.push(dir);
  const store = openSqliteStore(join(dir, 'relay.sqlite'));
  const events: EventLog = {
    ...store.events,
    receiveWebhook: (eventId, type, referenceId, e) =>
      store.events.receiveWebhook(eventId, type, referenceId, e && { type: e.type, data: { ...(e.data as object), pad: pad(Number(eventId.split('-').pop())) } }),
  };
  return { ...store, events };
}

/** A signed purchase webhook for the ramp session `reference_id`, event `n` (its player's event ~60 KB). */
function deliver(reference_id: string, n: number) {
  const raw = JSON.stringify({ id: `evt-${n}`, type: 'ramp.purchase.completed', data: { amount: `${n}`, currency: 'SATS', reference_id } });
  const signature = `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
  return fetch(`${relay!.url}/v1/webhooks/payments`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-zbd-signature': signature }, body: raw });
}

describe('an event stream whose client does not read', () => {
  it('is cut once too much waits for it (place and socket freed); back with its Last-Event-ID the client gets every event', async () => {
    relay = await startTestRelay(
      { WEBHOOK_SECRET: SECRET, RELAY_PUBLIC_URL: 'https://relay.example.com', RELAY_ADMIN_TOKEN: ADMIN, RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE: '0' },
      { relay: { streamCaps: { perPlayer: 1, perAddress: 0 }, store: paddingStore() } },
    );
    const player = await relay.link('sleepy-reader');
    const ramp = await fetch(`${relay.url}/v1/ramp-sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${player.token}` },
      body: JSON.stringify({ email: 'player@example.com' }),
    });
    expect(ramp.status).toBe(201);
    const { widgetUrl } = (await ramp.json()) as { widgetUrl: string };
    const reference = relay.sandbox!.rampSessions.get(widgetUrl.split('/').pop()!)!.referenceId!;

    // The stream, on a socket read once (the head) and then never again.
    const { port } = new URL(relay.url);
    const socket = connect({ host: '127.0.0.1', port: Number(port) });
    let received = '';
    let closed = false;
    socket.setEncoding('utf8');
    socket.on('error', () => undefined);
    socket.on('close', () => (closed = true));
    socket.write(`GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${player.token}\r\nLast-Event-ID: 0\r\n\r\n`);
    await new Promise<void>((resolve) =>
      socket.once('data', (d: string) => {
        received += d;
        socket.pause();
        resolve();
      }),
    );
    expect(received).toMatch(/^HTTP\/1\.1 200/);
    expect(await openStreams()).toBe(1);

    // 400 events of 60 KB (24 MB): far more than a socket's buffers hold (a few MB).
    const sent = 400;
    for (let n = 1; n <= sent; n++) expect((await deliver(reference, n)).status).toBe(200);
    // The relay let the stream go: its place is free, while the client still has not read.
    await expect.poll(openStreams, { timeout: 10_000 }).toBe(0);

    // The client reads what reached it, and finds the connection cut.
    socket.on('data', (d: string) => (received += d));
    socket.resume();
    await expect.poll(() => closed, { timeout: 10_000 }).toBe(true);
    const ids = [...received.matchAll(/\nid: (\d+)\n\n/g)].map((m) => Number(m[1]));
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThan(sent);

    // Back with the last id it read whole: the rest, from the log, in order, none twice.
    const rest = await readSse(relay.url, player.token, sent - ids.length, String(ids.at(-1)), 20_000);
    const all = [...ids, ...rest.map((e) => Number(e.id))];
    expect(all).toHaveLength(sent);
    expect(new Set(all).size).toBe(sent);
    expect(all).toEqual([...all].sort((a, b) => a - b));
    expect(rest.at(-1)?.data).toMatchObject({ amount: `${sent}`, pad: pad(sent) });
  }, 60_000);
});
