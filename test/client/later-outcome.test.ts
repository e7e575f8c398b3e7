import { afterEach, describe, expect, it } from 'vitest';
import { createRewardBus, memoryStorage, type RewardBus, type RewardOutcome, type RewardRecord } from '../../src/client/node.js';
import { fakeStream } from '../helpers/client.js';

/** The relay's API as far as these tests need it, in process: a player, a catalog, a history the test edits. */
function fakeRelay() {
  const history: RewardRecord[] = [];
  const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const path = new URL(String(input)).pathname;
    if (path === '/v1/players') return json({ userId: 'u-alice', gamertag: 'alice', token: 'tok', expiresAt: '2999-01-01T00:00:00.000Z' }, 201);
    if (path === '/v1/catalog') return json({ achievements: [{ id: 'first-coin', title: 'First coin', sats: 21, repeat: { kind: 'once' } }] });
    if (path === '/v1/rewards' && init?.method !== 'POST') return json({ rewards: history });
    return new Response(JSON.stringify({ code: 'not_found' }), { status: 404, headers: { 'content-type': 'application/problem+json' } });
  }) as typeof globalThis.fetch;
  return { fetch, history };
}

const review: RewardRecord = {
  id: 'r1',
  idempotencyKey: 'k1',
  achievementId: 'first-coin',
  userId: 'u-alice',
  sats: 21,
  status: 'needs_review',
  reason: 'payment_unclear',
  createdAt: '2026-11-23T10:00:00.000Z',
};
const paid: RewardRecord = { ...review, status: 'paid', reason: undefined, paymentId: 'pay-1', settledAt: '2026-11-23T10:07:00.000Z' } as RewardRecord;

const buses: RewardBus[] = [];
afterEach(() => buses.splice(0).forEach((b) => b.destroy()));

function busOn(storage: ReturnType<typeof memoryStorage>, relay: ReturnType<typeof fakeRelay>, stream = fakeStream()) {
  const b = createRewardBus({ relayUrl: 'http://relay.test', storage, fetch: relay.fetch, eventSource: stream.Source });
  buses.push(b);
  const heard: string[] = [];
  const outcomes: RewardOutcome[] = [];
  for (const event of ['reward:review', 'reward:paid', 'reward:failed'] as const) {
    b.on(event, (o) => {
      outcomes.push(o);
      heard.push(`${event}${o.afterReview ? ' after review' : ''}`);
    });
  }
  return { b, heard, outcomes, stream };
}

describe('a reward checked, then settled', () => {
  it('is said as paid after review once, however often the stream repeats it', async () => {
    const relay = fakeRelay();
    const { b, heard, outcomes, stream } = busOn(memoryStorage(), relay);
    await b.link('alice');
    stream.send('reward', review);
    stream.send('reward', paid);
    stream.send('reward', paid);
    stream.send('reward', review);
    await expect.poll(() => heard).toEqual(['reward:review', 'reward:paid after review']);
    expect(outcomes[1]).toMatchObject({ sats: 21, gamertag: 'alice', remote: false, record: { status: 'paid', paymentId: 'pay-1' } });
    expect(await b.history()).toEqual([]);
  });

  it('is said on the next session, from the history, when it settled while the game was closed', async () => {
    const storage = memoryStorage();
    const relay = fakeRelay();
    relay.history.push(review);
    const first = busOn(storage, relay);
    await first.b.link('alice');
    first.stream.send('reward', review);
    await expect.poll(() => first.heard).toEqual(['reward:review']);
    await first.b.history();
    first.b.destroy();

    relay.history.splice(0, 1, paid);
    const later = busOn(storage, relay);
    await later.b.ready;
    await expect.poll(() => later.heard).toEqual(['reward:paid after review']);
    await later.b.history();
    await later.b.link('alice');
    expect(later.heard).toEqual(['reward:paid after review']);
    expect((await later.b.history())[0]).toMatchObject({ id: 'r1', status: 'paid' });
  });

  it('is not said on a device that never knew it as waiting', async () => {
    const relay = fakeRelay();
    relay.history.push(paid);
    const { b, heard } = busOn(memoryStorage(), relay);
    await b.link('alice');
    await b.history();
    expect(heard).toEqual([]);
  });
});
