// Finding 6 of issue 34 (the client's half): the bus opened its event stream with the player's
// token in the URL (`/v1/events?token=rb1.…`), which access logs keep. It now asks for a single-use
// ticket for every connection, and reconnects with a new one, resuming after the last event.
import { afterEach, describe, expect, it } from 'vitest';
import { type EventSourceClass, PlayerStream, type RelayAnswer } from '../../src/client/delivery/index.js';
import { createRewardBus, memoryStorage, type RewardBus, type RewardOutcome } from '../../src/client/node.js';
import type { EventStreamTicket } from '../../src/wire/relay-api.js';
import { fetchEventSource } from '../helpers/client.js';
import { fakeEventSources } from '../helpers/fake-event-source.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

let relay: TestRelay | undefined;
const buses: RewardBus[] = [];
afterEach(async () => {
  buses.splice(0).forEach((b) => b.destroy());
  await relay?.stop();
  relay = undefined;
});

/**
 * Alice's bus listening on its stream (the relay counts it open), and her other device, whose
 * first-coin the bus has heard on it.
 */
async function aliceListening(options?: Parameters<typeof startTestRelay>[1]) {
  const r = await startTestRelay({}, options);
  relay = r;
  const stream = fetchEventSource();
  const b = createRewardBus({ relayUrl: r.url, storage: memoryStorage(), eventSource: stream.Source });
  buses.push(b);
  const heard: RewardOutcome[] = [];
  b.on('reward:paid', (o) => heard.push(o));
  const { token } = await b.link('alice');
  const other = await r.link('alice');
  await expect.poll(() => stream.urls.length).toBe(1);
  const open = async () =>
    (await fetch(`${r.url}/metrics`, { headers: { authorization: `Bearer ${r.adminToken}` } }).then((x) => x.text())).match(/rewardbus_event_streams_open (\d+)/)?.[1];
  await expect.poll(open).toBe('1');
  expect((await r.claim(other.token, { achievementId: 'first-coin' })).status).toBe(201);
  await expect.poll(() => heard.map((o) => o.record?.achievementId)).toEqual(['first-coin']);
  return { stream, b, heard, token, other };
}

describe("the client's event stream", () => {
  it('Tokens in logs: the bus opens its stream with a ticket, never its token in the URL; a dropped stream reconnects with a new ticket and resumes', async () => {
    // Another device of the same player claims: this bus hears it on its stream.
    const { stream, heard, token, other } = await aliceListening();

    stream.drop();
    await expect.poll(() => stream.urls.length, { timeout: 10_000 }).toBe(2);
    expect((await relay!.claim(other.token, { achievementId: 'daily-login' })).status).toBe(201);
    await expect.poll(() => heard.map((o) => o.record?.achievementId), { timeout: 10_000 }).toEqual(['first-coin', 'daily-login']);

    const [first, second] = stream.urls.map((u) => new URL(u));
    for (const url of [first!, second!]) {
      expect(url.searchParams.get('token')).toBeNull();
      expect(url.searchParams.get('ticket')).toMatch(/^rbt1\./);
      expect(url.href).not.toContain(token);
    }
    expect(second!.searchParams.get('ticket')).not.toBe(first!.searchParams.get('ticket'));
    // It resumes after the event it heard last, so nothing said while it was away is lost.
    expect(second!.searchParams.get('lastEventId')).toMatch(/^\d+$/);
  });

  it('reopens the stream on a renewed token resuming after the last event heard, so nothing said between the two is lost', async () => {
    // Tokens that live 30 s: the bus renews one within its last minute, so every claim links again first.
    const { b, stream, heard, token } = await aliceListening({ relay: { tokenTtlMs: 30_000 } });

    b.unlock('daily-login');
    await expect.poll(() => heard.map((o) => o.record?.achievementId)).toEqual(['first-coin', 'daily-login']);
    expect(b.player?.token).not.toBe(token);
    await expect.poll(() => stream.urls.length).toBe(2);
    expect(new URL(stream.urls[1]!).searchParams.get('lastEventId')).toMatch(/^\d+$/);
  });

  it('links again when the relay ends its stream as its token lapses, and listens on, resuming after the last event heard', async () => {
    // Tokens live 3 s: the relay ends the stream then, and a ticket asked with the lapsed token is 401.
    const { b, stream, heard, token } = await aliceListening({ relay: { tokenTtlMs: 3_000 } });
    await expect.poll(() => b.player?.token, { timeout: 15_000 }).not.toBe(token);
    await expect.poll(() => stream.urls.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect(new URL(stream.urls.at(-1)!).searchParams.get('lastEventId')).toMatch(/^\d+$/);
    // Another device's claim, after the lapse: this bus hears it on the stream it opened again.
    const other = await relay!.link('alice');
    expect((await relay!.claim(other.token, { achievementId: 'daily-login' })).status).toBe(201);
    await expect.poll(() => heard.map((o) => o.record?.achievementId), { timeout: 10_000 }).toEqual(['first-coin', 'daily-login']);
  }, 30_000);

  it('reopens the stream when the game links the same player again, resuming after the last event heard', async () => {
    const { b, stream } = await aliceListening();

    // A game that calls link() on each start, or again from its menu.
    await b.link('alice');
    await expect.poll(() => stream.urls.length).toBe(2);
    expect(new URL(stream.urls[1]!).searchParams.get('lastEventId')).toMatch(/^\d+$/);
  });

  it('Tokens in logs: against a relay without tickets (before 0.3) the bus still streams, with the token (deprecated)', async () => {
    relay = await startTestRelay();
    const stream = fetchEventSource();
    const fetchWithoutTickets: typeof fetch = async (input, init) =>
      String(input).endsWith('/v1/events/ticket')
        ? new Response('{"code":"not_found"}', { status: 404, headers: { 'content-type': 'application/problem+json' } })
        : fetch(input, init);
    const b = createRewardBus({ relayUrl: relay.url, storage: memoryStorage(), eventSource: stream.Source, fetch: fetchWithoutTickets });
    buses.push(b);
    const { token } = await b.link('bob');
    await expect.poll(() => stream.urls.length).toBe(1);
    expect(new URL(stream.urls[0]!).searchParams.get('token')).toBe(token);
  });

  it('Tokens in logs: opened twice at once for one player, the stream opens once, with the later ticket', async () => {
    const { Source, made } = fakeEventSources();
    const urls = () => made.map((s) => s.url);
    const pending: Array<(a: RelayAnswer<EventStreamTicket>) => void> = [];
    const relay = {
      eventTicket: () => new Promise<RelayAnswer<EventStreamTicket>>((resolve) => pending.push(resolve)),
      eventsUrl: (ticket: string) => `http://relay.test/v1/events?ticket=${ticket}`,
      eventsUrlWithToken: () => 'http://relay.test/v1/events?token=never',
    };
    const stream = new PlayerStream(relay, { reward: () => undefined, completed: () => undefined, failed: () => undefined }, Source as unknown as EventSourceClass);
    const player = { userId: 'u1', gamertag: 'alice', token: 'rb1.x.y', expiresAt: '2999-01-01T00:00:00.000Z' };
    stream.open(player);
    stream.open(player);
    expect(pending).toHaveLength(2);
    pending[0]!({ ok: true, status: 200, body: { ticket: 'first', expiresIn: 60 } });
    pending[1]!({ ok: true, status: 200, body: { ticket: 'second', expiresIn: 60 } });
    await expect.poll(() => urls().length).toBeGreaterThan(0);
    expect(urls()).toEqual(['http://relay.test/v1/events?ticket=second']);
    stream.close();
  });
});
