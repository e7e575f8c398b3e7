import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage, type RewardStorage } from '../../src/client/node.js';
import type { PlayerSession } from '../../src/wire/relay-api.js';
import { busMaker, next, noPlayTime } from '../helpers/client.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

let relay: TestRelay | undefined;
const { bus, destroyAll } = busMaker(() => relay!.url, memoryStorage);
afterEach(async () => {
  destroyAll();
  await relay?.stop();
  relay = undefined;
});

/** A fetch where another server (a proxy's error page) answers the first `times` requests to `path` with `status`, then lets them through. */
function foreignFirst(path: string, status: number, times: number) {
  const seen = { foreign: 0, through: 0 };
  const fetched = (async (input: RequestInfo | URL, init?: RequestInit) => {
    if (new URL(String(input)).pathname === path && init?.method === 'POST') {
      if (seen.foreign < times) {
        seen.foreign++;
        return new Response('<html><body>403 Forbidden</body></html>', { status, headers: { 'content-type': 'text/html' } });
      }
      seen.through++;
    }
    return fetch(input, init);
  }) as typeof fetch;
  return { fetch: fetched, seen };
}

/** Every final outcome the bus says, and its offline notices. */
function heard(b: ReturnType<typeof bus>) {
  const events: string[] = [];
  for (const e of ['reward:paid', 'reward:rejected', 'reward:failed', 'reward:review', 'relay:offline'] as const) b.on(e, () => events.push(e));
  return events;
}

describe('an answer that is not the relay’s', () => {
  it('ends no claim: a proxy’s 403 page leaves the intent queued, and it is paid once when the relay answers', async () => {
    relay = await startTestRelay();
    const net = foreignFirst('/v1/rewards', 403, 2);
    const b = bus({ fetch: net.fetch, ...noPlayTime });
    await b.link('alice');
    const events = heard(b);
    const paid = next(b, 'reward:paid');
    const id = b.unlock('first-coin');
    expect((await paid).intent.id).toBe(id);
    // Before, the first 403 ended it: said rejected (http_403) and deleted, never paid.
    expect(events).toEqual(['relay:offline', 'reward:paid']);
    expect(net.seen).toEqual({ foreign: 2, through: 1 });
    expect(relay.sandbox!.payments()).toHaveLength(1);
    expect(b.pending()).toEqual([]);
  });

  it('does not take the player for unknown: a lapsed token’s renewal answered 404 by another server keeps the intent', async () => {
    relay = await startTestRelay();
    const storage: RewardStorage = memoryStorage();
    const first = bus({ storage });
    const player = await first.link('alice');
    first.destroy();
    // The stored token has lapsed: the next claim renews it first, by linking the gamertag again.
    await storage.setMany([[`session:${player.userId}`, { ...player, expiresAt: new Date(0).toISOString() } satisfies PlayerSession]]);
    const net = foreignFirst('/v1/players', 404, 2);
    const b = bus({ storage, fetch: net.fetch, ...noPlayTime });
    const events = heard(b);
    const paid = next(b, 'reward:paid');
    const id = b.unlock('first-coin');
    expect((await paid).intent.id).toBe(id);
    // Before, the renewal's 404 made alice unknown: the intent said rejected (player_unknown) and deleted.
    expect(events).toEqual(['relay:offline', 'reward:paid']);
    expect(net.seen.foreign).toBe(2);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it('fails link() with relay_unreachable, naming the address that answered and relayUrl', async () => {
    relay = await startTestRelay();
    const b = bus({ fetch: foreignFirst('/v1/players', 404, 1).fetch });
    const linking = b.link('alice');
    await expect(linking).rejects.toMatchObject({ code: 'relay_unreachable' });
    await expect(linking).rejects.toThrow(`${relay.url}/v1/players answered 404 (text/html), not the relay: check relayUrl`);
  });
});
