import { describe, expect, it, vi } from 'vitest';
import { memoryStorage, RewardBusError } from '../../src/client/node.js';
import { tabsName } from '../../src/client/tabs/index.js';
import { busesOnTestRelay, controlledFetch, next } from '../helpers/client.js';

// The courier's chunk, as a browser fetches it: gone until `back`, and slow while `arriving` waits.
const chunk = vi.hoisted(() => ({ back: false, tries: 0, arriving: Promise.resolve() }));
vi.mock('../../src/client/courier.js', async (importOriginal) => {
  chunk.tries++;
  await chunk.arriving;
  if (!chunk.back) throw new TypeError('Failed to fetch dynamically imported module');
  return importOriginal();
});

const { bus, start } = busesOnTestRelay(memoryStorage);

describe('the bus before its courier has come', () => {
  it('keeps unlocks, rejects with relay_unreachable meanwhile, and tries the chunk again until it comes', async () => {
    await start();
    const storage = memoryStorage();
    const b = bus({ storage });
    const errors: Error[] = [];
    b.on('error', (e) => errors.push(e));
    const id = b.unlock('first-coin');
    await expect(b.ready).rejects.toBeInstanceOf(RewardBusError);
    await expect(b.link('alice')).rejects.toMatchObject({ code: 'relay_unreachable' });
    await b.flush();
    expect(errors.length).toBeGreaterThan(0);
    expect(b.pending().map((i) => i.id)).toEqual([id]);
    expect((await storage.entries('intent:')).map(([, i]) => (i as { id: string }).id)).toEqual([id]);

    // Tried again by itself, after a backoff (a second, then longer).
    const tries = chunk.tries;
    await vi.waitFor(() => expect(chunk.tries).toBeGreaterThan(tries), { timeout: 3000, interval: 50 });

    chunk.back = true;
    const player = await b.link('alice');
    expect(player.gamertag).toBe('alice');
    const paid = await next(b, 'reward:paid');
    expect(paid.intent.id).toBe(id);
  });

  it('hears another tab pay what it unlocked before its courier came: says it once, and neither stores nor claims it again', async () => {
    const relay = await start();
    chunk.back = true;
    const storage = memoryStorage();
    const a = bus({ storage });
    await a.link('alice');

    // Tab B's courier is slow to come (a fresh page: a module of its own, fetched anew).
    let arrive: () => void = () => undefined;
    chunk.arriving = new Promise<void>((r) => (arrive = r));
    vi.resetModules();
    const net = controlledFetch();
    const b = bus({ storage, fetch: net.fetch });
    const saidByB: Array<{ id: string; remote: boolean }> = [];
    b.on('reward:paid', (o) => saidByB.push({ id: o.intent.id, remote: o.remote }));
    let paidByA: string | undefined;
    a.once('reward:paid', (o) => (paidByA = o.intent.id));
    const id = b.unlock('first-coin')!;

    // Tab A finds it in the shared store, pays it and says so to the other tabs (B among them,
    // as this listener hears).
    const told = new Promise<void>((resolve) => {
      const tabs = new BroadcastChannel(tabsName(relay.url, storage));
      tabs.onmessage = (m: MessageEvent<{ type: string }>) => {
        if (m.data.type !== 'outcome') return;
        tabs.close();
        resolve();
      };
    });
    await vi.waitFor(async () => {
      await a.flush();
      expect(paidByA).toBe(id);
    });
    expect(await storage.entries('intent:')).toEqual([]);

    await told;
    arrive();
    await b.ready;
    await b.flush();
    await vi.waitFor(() => expect(saidByB).toEqual([{ id, remote: true }]));
    expect(net.tries).toBe(0);
    expect(await storage.entries('intent:')).toEqual([]);
    expect(b.pending()).toEqual([]);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });
});
