import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/client/node.js';
import { DEFAULT_CATALOG } from '../../src/relay/index.js';
import { busesOnTestRelay, fetchEventSource, next } from '../helpers/client.js';

const storage = memoryStorage();
const { bus, start } = busesOnTestRelay(() => storage);
const ADMIN = 'admin-token-0123456789abcdefghijklmnop';
const gem = { id: 'gem', title: 'Gem', sats: 7, repeat: { kind: 'once' as const }, hold: true };
const coin = { id: 'coin', title: 'Coin', sats: 1, repeat: { kind: 'once' as const } };

/** A fetch that counts the player's history reads (`GET /v1/rewards`) and can keep event tickets from the relay. */
function network() {
  const n = {
    historyReads: 0,
    relayAway: false,
    fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
      const path = new URL(String(input)).pathname;
      if (n.relayAway && path === '/v1/events/ticket') throw new TypeError('fetch failed');
      if (path === '/v1/rewards' && (init?.method ?? 'GET') === 'GET') n.historyReads++;
      return fetch(input, init);
    }) as typeof fetch,
  };
  return n;
}

describe('an event stream cut before it heard anything (a relay restart)', () => {
  it('says a held reward an operator approved meanwhile, once it listens again', async () => {
    const relay = await start({ RELAY_ADMIN_TOKEN: ADMIN }, { relay: { catalog: [...DEFAULT_CATALOG, gem] } });
    // The reward held on this device, by a bus without a stream.
    const first = bus({ eventSource: false });
    await first.link('alice');
    const held = next(first, 'reward:held');
    first.unlock('gem');
    const recordId = (await held).record!.id;
    first.destroy();

    // The page reloaded: its stream opens, and is cut before any event; no ticket while the relay is away.
    const stream = fetchEventSource();
    const net = network();
    const b = bus({ eventSource: stream.Source, fetch: net.fetch });
    const heard: string[] = [];
    b.on('reward:paid', (o) => heard.push(`paid${o.afterHold ? ' after hold' : ''}`));
    await b.ready;
    await expect.poll(() => stream.urls.length).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    net.relayAway = true;
    stream.drop();
    const approved = await fetch(`${relay.url}/admin/api/review/${recordId}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'x-operator': 'ops' },
    });
    expect(approved.status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    net.relayAway = false;
    await expect.poll(() => stream.urls.length, { timeout: 5_000 }).toBeGreaterThan(1);
    // Before: the new stream started from now, and nothing was said until a reload.
    await expect.poll(() => heard, { timeout: 5_000 }).toEqual(['paid after hold']);
  });

  it('reads no history again when the new connection resumes after an event it heard', async () => {
    await start({}, { relay: { catalog: [...DEFAULT_CATALOG, coin] } });
    const stream = fetchEventSource();
    const net = network();
    const b = bus({ eventSource: stream.Source, fetch: net.fetch, storage: memoryStorage() });
    await b.link('bob');
    await expect.poll(() => stream.urls.length).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    // Paid on the player's other device: heard on the stream, whose id the next connection resumes after.
    const other = bus({ eventSource: false, storage: memoryStorage() });
    await other.link('bob');
    const heard = next(b, 'reward:paid');
    other.unlock('coin');
    expect((await heard).remote).toBe(true);
    const reads = net.historyReads;
    stream.drop();
    await expect.poll(() => stream.urls.length, { timeout: 5_000 }).toBe(2);
    expect(stream.urls[1]).toContain('lastEventId=');
    await new Promise((r) => setTimeout(r, 300));
    expect(net.historyReads).toBe(reads);
  });

  it('reads the history once, not per reconnection, while each connection is cut as it opens', async () => {
    await start({}, { relay: { catalog: [...DEFAULT_CATALOG, coin] } });
    const stream = fetchEventSource();
    // A proxy that ends every stream as soon as it has begun: each connection opens, hears nothing, and is cut.
    const Source = class extends stream.Source {
      constructor(url: string) {
        super(url);
        this.addEventListener('open', () => stream.drop());
      }
    };
    const net = network();
    const b = bus({ eventSource: Source, fetch: net.fetch, storage: memoryStorage() });
    await b.link('carol');
    const reads = net.historyReads;
    await expect.poll(() => stream.urls.length, { timeout: 8_000 }).toBeGreaterThanOrEqual(5);
    // Before: a history read per connection after the first (about one a second).
    expect(net.historyReads - reads).toBe(1);
  });
});
