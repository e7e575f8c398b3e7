import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/client/node.js';
import { busesOnTestRelay, lapsedPlayer, next, noPlayTime } from '../helpers/client.js';
import { heardOutcomes, otherServerFirst } from '../helpers/other-server.js';

const { bus, start } = busesOnTestRelay(memoryStorage);

describe('an answer that is not the relay’s', () => {
  it('ends no claim: a proxy’s 403 page leaves the intent queued, and it is paid once when the relay answers', async () => {
    const relay = await start();
    const net = otherServerFirst('/v1/rewards', 403, 2);
    const b = bus({ fetch: net.fetch, ...noPlayTime });
    await b.link('alice');
    const events = heardOutcomes(b);
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
    const relay = await start();
    const storage = await lapsedPlayer(bus, memoryStorage());
    const net = otherServerFirst('/v1/players', 404, 2);
    const b = bus({ storage, fetch: net.fetch, ...noPlayTime });
    const events = heardOutcomes(b);
    const paid = next(b, 'reward:paid');
    const id = b.unlock('first-coin');
    expect((await paid).intent.id).toBe(id);
    // Before, the renewal's 404 made alice unknown: the intent said rejected (player_unknown) and deleted.
    expect(events).toEqual(['relay:offline', 'reward:paid']);
    expect(net.seen.foreign).toBe(2);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it('fails link() with relay_unreachable, naming the address that answered and relayUrl', async () => {
    const relay = await start();
    const b = bus({ fetch: otherServerFirst('/v1/players', 404, 1).fetch });
    const linking = b.link('alice');
    await expect(linking).rejects.toMatchObject({ code: 'relay_unreachable' });
    await expect(linking).rejects.toThrow(`${relay.url}/v1/players answered 404 (text/html), not the relay: check relayUrl`);
  });

  /** A fetch where `answer` stands for another server at `path` (POST) until `through` is set. */
  function otherServerAt(path: string, answer: () => Response) {
    const seen = { other: 0, through: false };
    const fetched = (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (new URL(String(input)).pathname === path && init?.method === 'POST' && !seen.through) {
        seen.other++;
        return answer();
      }
      return fetch(input, init);
    }) as typeof fetch;
    return { fetch: fetched, seen };
  }

  it.each([
    ["the game's own API's JSON, a 200 that is no session", () => Response.json({ ok: true, status: 'created' }, { status: 200 })],
    ['a gateway’s JSON refusal with a code of its own (no problem document)', () => Response.json({ code: 'PGRST301', message: 'JWT expired' }, { status: 401 })],
  ])('does not take the player for unknown when a renewal meets %s', async (_, answer) => {
    const relay = await start();
    const storage = await lapsedPlayer(bus, memoryStorage());
    const net = otherServerAt('/v1/players', answer);
    const b = bus({ storage, fetch: net.fetch, ...noPlayTime });
    const events = heardOutcomes(b);
    const id = b.unlock('first-coin');
    await expect.poll(() => net.seen.other).toBeGreaterThanOrEqual(2);
    // Before, the first such answer made alice unknown: the intent said rejected (player_unknown) and deleted.
    expect(b.pending().map((i) => i.id)).toEqual([id]);
    const paid = next(b, 'reward:paid');
    net.seen.through = true;
    await b.flush();
    expect((await paid).intent.id).toBe(id);
    expect(events).toEqual(['relay:offline', 'reward:paid']);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it('asks a renewal that finds no relay again less and less often, not every second', async () => {
    await start();
    const storage = await lapsedPlayer(bus, memoryStorage());
    const net = otherServerAt('/v1/players', () => new Response('<html>Not Found</html>', { status: 404, headers: { 'content-type': 'text/html' } }));
    const b = bus({ storage, fetch: net.fetch, retry: { baseMs: 200, maxMs: 60_000 }, ...noPlayTime });
    b.unlock('first-coin');
    await new Promise((r) => setTimeout(r, 2_500));
    // Its backoff grows: at most 0, 0.4, 1.2 and 2.8 s in. Before, each try waited 0.1–0.2 s: a dozen or more.
    expect(net.seen.other).toBeGreaterThanOrEqual(2);
    expect(net.seen.other).toBeLessThanOrEqual(4);
  });
});
