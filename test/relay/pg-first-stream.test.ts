// A first connection to the event stream (no Last-Event-ID) starts from now (docs/relay-api.md),
// on PostgreSQL with several relays too. Red-team pass F: a relay's listener read a player it had
// no stream for from where it started, so the player's first stream on it got, with its first
// live event, every event made for the player (on any relay) since that relay started.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { freshDatabase, POSTGRES_HOW } from '../helpers/postgres.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';
import { type SseMessage, sseMessages } from '../helpers/sse.js';

const url = inject('postgresUrl');
const relays: TestRelay[] = [];
afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});
const coin = { relay: { catalog: [{ id: 'coin', title: 'Coin', sats: 1, repeat: { kind: 'cooldown' as const, seconds: 0 } }] } };

describe.skipIf(!url)(url ? 'a first event stream on one of two PostgreSQL relays' : `a first event stream on PostgreSQL (skipped: ${POSTGRES_HOW})`, () => {
  it('hears only what happens after it opened, not what another relay did before', async () => {
    const env = { RELAY_DATABASE_URL: await freshDatabase(url, { migrated: true }), RELAY_SECRET: `${randomUUID()}${randomUUID()}`, RELAY_USER_DAILY_CAP_SATS: '0' };
    const a = await startTestRelay(env, coin);
    relays.push(a);
    const b = await startTestRelay(env, coin);
    relays.push(b);
    const player = await b.link('alice');
    const before = await b.claim(player.token, { achievementId: 'coin' });
    expect(before.body.status).toBe('paid');
    // The first connection on relay A: no Last-Event-ID.
    const controller = new AbortController();
    const res = await fetch(`${a.url}/v1/events?token=${encodeURIComponent(player.token)}`, { signal: controller.signal });
    const heard: SseMessage[] = [];
    const reading = (async () => {
      for await (const m of sseMessages(res)) heard.push(m);
    })().catch(() => undefined);
    try {
      const after = await b.claim(player.token, { achievementId: 'coin' });
      await expect.poll(() => heard.some((m) => m.data.id === after.body.id && m.data.status === 'paid')).toBe(true);
      expect(heard.filter((m) => m.data.id === before.body.id)).toEqual([]);
    } finally {
      controller.abort();
      await reading;
    }
  });
});
