import 'fake-indexeddb/auto';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fileStorage, idbStorage, memoryStorage, type RewardBus, type RewardOutcome, type RewardStorage } from '../../src/client/node.js';
import type { PlayerSession } from '../../src/wire/relay-api.js';
import { busMaker, controlledFetch, everyCoin, fetchEventSource, next, noPlayTime } from '../helpers/client.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

let relay: TestRelay | undefined;
let dbCount = 0;
const freshStore = () => idbStorage(`rewardbus-test-${++dbCount}`);
const { bus, destroyAll } = busMaker(() => relay!.url, freshStore);
afterEach(async () => {
  destroyAll();
  await relay?.stop();
  relay = undefined;
});

describe('the reward bus', () => {
  it('pays an unlocked achievement once and reports it paid with sats and gamertag', async () => {
    relay = await startTestRelay();
    const b = bus();
    await b.link('alice');
    const paid = next(b, 'reward:paid');
    const id = b.unlock('first-coin');
    const outcome = await paid;
    expect(outcome).toMatchObject({ sats: 21, gamertag: 'alice', remote: false, record: { status: 'paid', achievementId: 'first-coin' } });
    expect(outcome.intent.id).toBe(id);
    expect(relay.sandbox!.payments()).toHaveLength(1);
    expect(b.pending()).toEqual([]);
    expect((await b.history()).map((r) => r.id)).toEqual([outcome.record!.id]);
  });

  it('queues while offline, and a reloaded bus on the same store pays it exactly once', async () => {
    relay = await startTestRelay();
    const net = controlledFetch();
    const storage = freshStore();
    const first = bus({ storage, fetch: net.fetch });
    await first.link('alice');
    await first.catalog();
    net.offline = true;
    const offline = next(first, 'relay:offline');
    const id = first.unlock('first-coin');
    await offline;
    await first.flush();
    expect(first.pending().map((i) => i.id)).toEqual([id]);
    expect(relay.sandbox!.payments()).toHaveLength(0);
    first.destroy();

    net.offline = false;
    const second = bus({ storage, fetch: net.fetch });
    const paid = await next(second, 'reward:paid');
    expect(paid.intent.id).toBe(id);
    await second.flush();
    expect(relay.sandbox!.payments()).toHaveLength(1);
    expect(second.pending()).toEqual([]);
    expect(second.player?.gamertag).toBe('alice');
  });

  it('keeps and sends again an intent whose claim a captive portal answered 200 with its own page (no reward record), under the same key', async () => {
    relay = await startTestRelay();
    const keys: string[] = [];
    let portal = 2;
    const b = bus({
      fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
        if (String(input).endsWith('/v1/rewards') && init?.method === 'POST') {
          keys.push(new Headers(init.headers).get('idempotency-key')!);
          if (portal-- > 0) return new Response(portal ? '<html>Sign in to the hotel wifi</html>' : '{}', { status: 200, headers: { 'content-type': 'text/html' } });
        }
        return fetch(input, init);
      }) as typeof fetch,
    });
    await b.link('alice');
    const errors: Error[] = [];
    b.on('error', (e) => errors.push(e));
    const heard: string[] = [];
    for (const e of ['reward:review', 'reward:rejected', 'reward:failed'] as const) b.on(e, () => heard.push(e));
    const paid = next(b, 'reward:paid');
    const id = b.unlock('first-coin');
    expect((await paid).intent.id).toBe(id);
    expect(keys).toEqual([id, id, id]);
    expect(heard).toEqual([]);
    expect(errors).toEqual([]);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it("says a reward paid to the player who earned it: one still queued for alice after the device switched to bob and reloaded is alice's", async () => {
    relay = await startTestRelay();
    // The first bus's claims never get through, whenever it tries (a destroyed bus may finish a
    // try already under way): only the reloaded bus's can pay alice's intent.
    const claimsOffline = (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (String(input).endsWith('/v1/rewards') && init?.method === 'POST') throw new TypeError('fetch failed: offline');
      return fetch(input, init);
    }) as typeof fetch;
    const storage = freshStore();
    const first = bus({ storage, fetch: claimsOffline });
    await first.link('alice');
    const id = first.unlock('first-coin');
    await first.flush();
    await first.link('bob');
    first.destroy();

    const reloaded = bus({ storage });
    const paid = await next(reloaded, 'reward:paid');
    expect(paid.intent.id).toBe(id);
    expect(reloaded.player?.gamertag).toBe('bob');
    expect(paid).toMatchObject({ gamertag: 'alice', record: { userId: paid.intent.userId } });
  });

  it('tells the player once when the tab dies between the final answer and its deletion: the next bus sends it again and says it then', async () => {
    relay = await startTestRelay();
    const storage = freshStore();
    const first = bus({ storage });
    await first.link('alice');
    first.destroy();
    // The tab dies as the relay's final answer comes: the intent's deletion is never stored, nor anything after it.
    let dead = false;
    let dying!: () => void;
    const died = new Promise<void>((r) => (dying = r));
    const never = new Promise<never>(() => undefined);
    const dies: RewardStorage = {
      get: (key) => (dead ? never : storage.get(key)),
      setMany: (list) => (dead ? never : storage.setMany(list)),
      delMany: (keys) => (dead ? never : storage.delMany(keys)),
      entries: (prefix) => (dead ? never : storage.entries(prefix)),
      write: (sets, dels) => {
        if (!dead && !dels.some((k) => k.startsWith('intent:'))) return storage.write!(sets, dels);
        dead = true;
        dying();
        return never;
      },
    };
    const tab = bus({ storage: dies });
    await tab.ready;
    const told = vi.fn();
    tab.on('reward:paid', told);
    const id = tab.unlock('first-coin');
    await died;
    tab.destroy();
    // Node has no Web Locks: the dead tab's lease in the store lapses (after 15 s), here at once.
    await storage.delMany(['lease']);
    expect(told).not.toHaveBeenCalled();
    expect(relay.sandbox!.payments()).toHaveLength(1);

    // The game reloads: the stored intent goes again under its key, and the relay's answer (the same payment) is said once.
    const reloaded = bus({ storage });
    const paid = await next(reloaded, 'reward:paid');
    expect(paid.intent.id).toBe(id);
    await reloaded.flush();
    expect(relay.sandbox!.payments()).toHaveLength(1);
    expect(reloaded.pending()).toEqual([]);
    expect(await storage.entries('intent:')).toEqual([]);
  });

  /**
   * A fetch whose claims wait at `gate`: `'request'` before they reach the relay, `'answer'` after
   * it paid them, on their way back. `held` resolves as the first one waits; `release()` lets them go.
   */
  function holdClaims(inner: typeof fetch, gate: 'request' | 'answer') {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const holds = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const claim = String(input).endsWith('/v1/rewards') && init?.method === 'POST';
      if (claim && gate === 'request') {
        holding();
        await released;
      }
      const res = await inner(input, init);
      if (claim && gate === 'answer') {
        holding();
        await released;
      }
      return res;
    }) as typeof fetch;
    return { fetch: holds, held, release };
  }

  /** Lets what is on its way (tab messages, writes, a second say) arrive before asserting that nothing more came. */
  const settle = () => new Promise((r) => setTimeout(r, 100));

  it.each([
    ['made before the answer comes', true],
    ['made after the answer came', false],
  ])('tells the player once of a claim the game destroyed its bus with on its way (a scene restart): the new bus on its storage, %s, says it as its own', async (_, early) => {
    relay = await startTestRelay();
    const net = controlledFetch();
    const hold = holdClaims(net.fetch, 'answer');
    const storage = freshStore();
    const first = bus({ storage, fetch: hold.fetch });
    await first.link('alice');
    const toldTheOldListeners = vi.fn();
    first.on('reward:paid', toldTheOldListeners);
    first.on('error', toldTheOldListeners);
    const id = first.unlock('first-coin')!;
    // The relay has paid it; its answer is on its way back as the game destroys its bus.
    await hold.held;
    first.destroy();

    const paid: RewardOutcome[] = [];
    let second: RewardBus | undefined;
    const makeSecond = () => {
      second = bus({ storage, fetch: net.fetch });
      second.on('reward:paid', (o) => paid.push(o));
    };
    if (early) makeSecond();
    hold.release();
    // The destroyed bus deletes the intent on the relay's final answer, as before.
    await expect.poll(() => storage.entries('intent:')).toEqual([]);
    if (!early) makeSecond();
    await expect.poll(() => paid.length).toBe(1);
    await second!.flush();
    await settle();
    expect(paid).toHaveLength(1);
    expect(paid[0]).toMatchObject({ intent: { id }, remote: false, sats: 21, gamertag: 'alice', record: { status: 'paid' } });
    expect(toldTheOldListeners).not.toHaveBeenCalled();
    expect(net.claims.get(id)).toBe(1);
    expect(relay.sandbox!.payments()).toHaveLength(1);
    expect(second!.pending()).toEqual([]);
  });

  it.each([
    ['a bus made before the destroy on its store (a framework that makes the new bus first) says it, and no later bus again', true],
    ['not a bus on another store (another player’s queue): the next bus on its store says it', false],
  ])('tells the player once of a claim a destroyed bus had on its way: %s', async (_, sameStore) => {
    relay = await startTestRelay();
    const net = controlledFetch();
    const hold = holdClaims(net.fetch, 'answer');
    const name = `rewardbus-test-${++dbCount}`;
    const storage = idbStorage(name);
    const first = bus({ storage, fetch: hold.fetch });
    await first.link('alice');
    const id = first.unlock('first-coin')!;
    await hold.held;
    // Out of reach, so it sends nothing of the shared store itself.
    const offline = controlledFetch();
    offline.offline = true;
    const bystanderOptions = sameStore ? { storage, fetch: offline.fetch, eventSource: false as const } : {};
    const early = sameStore ? bus(bystanderOptions) : undefined;
    if (early) await early.ready;
    first.destroy();
    const bystander = early ?? bus(bystanderOptions);
    await bystander.ready;
    const bystanderPaid: RewardOutcome[] = [];
    bystander.on('reward:paid', (o) => o.intent.id === id && bystanderPaid.push(o));
    hold.release();
    await expect.poll(() => storage.entries('intent:')).toEqual([]);
    if (sameStore) await expect.poll(() => bystanderPaid.length).toBe(1);
    await settle();
    bystander.destroy();

    // Its store asked for again by name, as the default storage is by each bus a game makes.
    const second = bus({ storage: idbStorage(name), fetch: net.fetch });
    const paid: RewardOutcome[] = [];
    second.on('reward:paid', (o) => paid.push(o));
    await second.ready;
    if (!sameStore) await expect.poll(() => paid.length).toBe(1);
    await second.flush();
    await settle();
    const told = [...bystanderPaid, ...paid];
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ intent: { id }, remote: false, record: { status: 'paid' } });
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it("says once, as its own, a claim a destroyed bus had on its way that the new bus hears first on the player's event stream", async () => {
    relay = await startTestRelay();
    const net = controlledFetch();
    const hold = holdClaims(net.fetch, 'request');
    const storage = freshStore();
    const first = bus({ storage, fetch: hold.fetch });
    await first.link('alice');
    const id = first.unlock('first-coin')!;
    await hold.held;
    first.destroy();

    const stream = fetchEventSource();
    let opened!: () => void;
    const open = new Promise<void>((r) => (opened = r));
    const Source = class extends stream.Source {
      constructor(url: string) {
        super(url);
        this.addEventListener('open', () => opened(), { once: true });
      }
    };
    const second = bus({ storage, fetch: net.fetch, eventSource: Source });
    const paid: RewardOutcome[] = [];
    second.on('reward:paid', (o) => paid.push(o));
    await open;
    // Paid now: the record comes on the new bus's stream before the answer reaches the destroyed bus.
    hold.release();
    await expect.poll(() => paid.length).toBe(1);
    await second.flush();
    await settle();
    expect(paid).toHaveLength(1);
    expect(paid[0]).toMatchObject({ intent: { id }, remote: false, sats: 21, record: { status: 'paid' } });
    expect(net.claims.get(id)).toBe(1);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it('retries a 5xx and a lost answer with the same key, and pays once', async () => {
    relay = await startTestRelay({}, noPlayTime);
    const net = controlledFetch();
    const b = bus({ fetch: net.fetch });
    await b.link('alice');
    net.failNext = 2;
    const paid = next(b, 'reward:paid');
    const id = b.unlock('first-coin')!;
    await paid;
    expect(net.claims.get(id)).toBe(3);

    // The relay pays, but the answer is lost: the retry gets the stored record back.
    net.loseNext = 1;
    const paidAgain = next(b, 'reward:paid');
    const id2 = b.unlock('level-complete')!;
    expect((await paidAgain).record?.achievementId).toBe('level-complete');
    expect(net.claims.get(id2)).toBe(2);
    expect(relay.sandbox!.payments()).toHaveLength(2);
  });

  it('does not retry a refusal: a 4xx is final and becomes reward:rejected', async () => {
    relay = await startTestRelay({}, { relay: { verifyClaim: () => 'not_today' } });
    const net = controlledFetch();
    const b = bus({ fetch: net.fetch });
    await b.link('alice');
    const rejected = next(b, 'reward:rejected');
    const id = b.unlock('first-coin')!;
    expect(await rejected).toMatchObject({ reason: 'not_today', record: { status: 'rejected' } });

    net.failNext = 1;
    net.failStatus = 400;
    const refused = next(b, 'reward:rejected');
    const id2 = b.unlock('daily-login')!;
    expect((await refused).reason).toBe('x');
    // Said once its deletion is stored: nothing is left to send again, and a drain sends nothing.
    expect(b.pending()).toEqual([]);
    await b.flush();
    expect([net.claims.get(id), net.claims.get(id2)]).toEqual([1, 1]);
    expect(b.pending()).toEqual([]);
  });

  it('makes no request for what the player cannot earn now, and says why', async () => {
    relay = await startTestRelay();
    const net = controlledFetch();
    const b = bus({ fetch: net.fetch });
    await b.link('alice');
    await b.catalog();
    const paid = next(b, 'reward:paid');
    b.unlock('first-coin');
    await paid;
    const skipped: Array<{ achievementId: string; reason: string }> = [];
    b.on('reward:skipped', (e) => skipped.push(e));
    expect(b.unlock('first-coin')).toBeUndefined();
    expect(b.unlock('coin-streak')).toBeDefined();
    expect(b.unlock('coin-streak')).toBeUndefined();
    expect(b.unlock('no-such-thing')).toBeUndefined();
    expect(skipped.map((s) => s.reason)).toEqual(['already_claimed', 'cooldown', 'unknown_achievement']);
    await b.flush();
    expect([...net.claims.values()].reduce((a, n) => a + n, 0)).toBe(2);
  });

  it('keeps paying when a listener throws, and reports the throw on error', async () => {
    relay = await startTestRelay();
    const b = bus();
    await b.link('alice');
    const errors: Error[] = [];
    b.on('error', (e) => errors.push(e));
    b.on('reward:queued', () => {
      throw new Error('game bug');
    });
    const heard: string[] = [];
    b.on('reward:queued', () => heard.push('second listener'));
    const paid = next(b, 'reward:paid');
    b.unlock('first-coin');
    await paid;
    expect(errors.map((e) => e.message)).toEqual(['game bug']);
    expect(heard).toEqual(['second listener']);
  });

  it('keeps paying when its error listener throws too: that throw goes to the console, not round the bus again', async () => {
    relay = await startTestRelay();
    const b = bus();
    await b.link('alice');
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      b.on('error', (e) => {
        throw new Error(`loud: ${e.message}`);
      });
      b.on('reward:queued', () => {
        throw new Error('game bug');
      });
      const paid = next(b, 'reward:paid');
      expect(b.unlock('first-coin')).toBeTypeOf('string');
      await paid;
      expect(logged.mock.calls.map(([, e]) => (e as Error).message)).toEqual(['loud: game bug']);
    } finally {
      logged.mockRestore();
    }
  });

  it('lets two tabs on one store send each intent once, and both hear every outcome', async () => {
    relay = await startTestRelay({}, noPlayTime);
    const net = controlledFetch();
    const storage = freshStore();
    const a = bus({ storage, fetch: net.fetch });
    await a.link('alice');
    const b = bus({ storage, fetch: net.fetch });
    await b.ready;
    net.offline = true;
    const ids = ['first-coin', 'level-complete', 'daily-login', 'coin-streak'].map((x) => a.unlock(x)!);
    await a.flush();
    const heardByB: RewardOutcome[] = [];
    const heardByA: RewardOutcome[] = [];
    b.on('reward:paid', (o) => heardByB.push(o));
    a.on('reward:paid', (o) => heardByA.push(o));
    net.offline = false;
    await Promise.all([a.flush(), b.flush(), a.flush(), b.flush()]);
    // Both tabs hear all four; then each intent was sent once.
    await expect.poll(() => [heardByA.length, heardByB.length]).toEqual([4, 4]);
    expect(ids.map((id) => net.claims.get(id))).toEqual([1, 1, 1, 1]);
    expect(relay.sandbox!.payments()).toHaveLength(4);
    // Each outcome is local (toast-worthy) in exactly one tab.
    const local = [...heardByA, ...heardByB].filter((o) => !o.remote).map((o) => o.intent.id);
    expect(local.sort()).toEqual([...ids].sort());
    expect(heardByA).toHaveLength(4);
    expect(heardByB).toHaveLength(4);
  });

  it("drains a player's backlog in batches, one after another, each intent once", async () => {
    relay = await startTestRelay({ RELAY_USER_DAILY_CAP_SATS: '0' }, everyCoin);
    const net = controlledFetch();
    const b = bus({ fetch: net.fetch, concurrency: 4, storage: memoryStorage() });
    await b.link('alice');
    net.offline = true;
    for (let i = 0; i < 40; i++) b.unlock('coin');
    net.offline = false;
    await b.flush();
    expect(b.pending()).toEqual([]);
    expect([...net.claims.values()].every((n) => n === 1)).toBe(true);
    expect(net.claims.size).toBe(40);
    // In batches of what the relay's catalog offers, one at a time: a device never has more
    // than one batch of a player's claims at the relay.
    expect(net.requests.slice(-2)).toEqual([25, 15]);
    expect(net.maxInFlight).toBe(1);
  });

  it.each([
    ['a 404 (no such path)', () => new Response(JSON.stringify({ code: 'not_found', status: 404 }), { status: 404 })],
    ["a proxy's 403", () => new Response('<html>forbidden</html>', { status: 403 })],
    ['a 200 that answers other claims', () => Response.json({ results: [{ idempotencyKey: 'someone-else', status: 201, reward: {} }] })],
  ])('sends claims one by one when the relay answers a batch with %s, and rejects none for it', async (_, answer) => {
    relay = await startTestRelay({ RELAY_USER_DAILY_CAP_SATS: '0' }, everyCoin);
    const net = controlledFetch();
    const refusing = (async (input: RequestInfo | URL, init?: RequestInit) => (String(input).endsWith('/v1/rewards/batch') ? answer() : net.fetch(input, init))) as typeof fetch;
    const b = bus({ fetch: refusing, storage: memoryStorage() });
    await b.link('alice');
    let rejected = 0;
    b.on('reward:rejected', () => rejected++);
    net.offline = true;
    for (let i = 0; i < 10; i++) b.unlock('coin');
    await b.flush();
    net.offline = false;
    await b.flush();
    expect(b.pending()).toEqual([]);
    expect(rejected).toBe(0);
    expect(relay.sandbox!.payments()).toHaveLength(10);
    expect(net.requests.every((n) => n === 1)).toBe(true);
  });

  /** A device's store where alice was linked, by a bus since gone (the game's last session). */
  async function storeOfLastSession(): Promise<RewardStorage> {
    relay = await startTestRelay({}, noPlayTime);
    const storage = freshStore();
    const last = bus({ storage });
    await last.link('alice');
    last.destroy();
    return storage;
  }

  it('keeps an unlock from the first frame, before the bus has loaded its courier: stored at once, then paid once', async () => {
    const storage = await storeOfLastSession();
    // The game reloads and unlocks in its first frame: the courier (a chunk of its own) and the
    // stored queue are not loaded yet. The intent must be in storage before the queue is read.
    const order: string[] = [];
    const watched: RewardStorage = {
      ...storage,
      setMany: (entries) => {
        if (entries.some(([k]) => k.startsWith('intent:'))) order.push('intent stored');
        return storage.setMany(entries);
      },
      // IndexedDB's store writes a batch in one transaction.
      write: (sets, dels) => {
        if (sets.some(([k]) => k.startsWith('intent:'))) order.push('intent stored');
        return storage.write!(sets, dels);
      },
      entries: (prefix) => {
        if (prefix === 'intent:') order.push('queue read');
        return storage.entries(prefix);
      },
    };
    const net = controlledFetch();
    const b = bus({ storage: watched, fetch: net.fetch });
    const queued = vi.fn();
    b.on('reward:queued', queued);
    const id = b.unlock('first-coin');
    expect(b.player).toBeUndefined();
    expect(queued).toHaveBeenCalledOnce();
    expect(b.pending().map((i) => i.id)).toEqual([id]);
    const paid = await next(b, 'reward:paid');
    expect(paid.intent.id).toBe(id);
    expect(paid.gamertag).toBe('alice');
    expect(order[0]).toBe('intent stored');
    await b.flush();
    expect(net.claims.get(id!)).toBe(1);
    expect(relay!.sandbox!.payments()).toHaveLength(1);
    expect(b.pending()).toEqual([]);
  });

  it('a bus destroyed before its courier loaded sends nothing, and the next bus pays what it kept', async () => {
    const storage = await storeOfLastSession();
    const net = controlledFetch();
    const gone = bus({ storage, fetch: net.fetch });
    const id = gone.unlock('first-coin');
    gone.destroy();
    await expect(gone.link('alice')).rejects.toThrow(/destroyed/);
    expect(net.tries).toBe(0);

    const again = bus({ storage });
    const paid = await next(again, 'reward:paid');
    expect(paid.intent.id).toBe(id);
    expect(relay!.sandbox!.payments()).toHaveLength(1);
    expect(net.tries).toBe(0);
  });

  it('does not hammer an unreachable relay: the backlog waits with the intent that found it gone', async () => {
    relay = await startTestRelay({}, everyCoin);
    const net = controlledFetch();
    const b = bus({ fetch: net.fetch, storage: memoryStorage(), retry: { baseMs: 2000, maxMs: 4000 } });
    await b.link('alice');
    // One claim on the real clock first: the modules the queue loads lazily (Node's storage lease)
    // arrive by real I/O, which a frozen clock would leave waiting behind the test's own timers.
    b.unlock('coin');
    await b.flush();
    expect(b.pending()).toHaveLength(0);
    let attempts = 0;
    b.on('reward:sent', () => attempts++);
    net.offline = true;
    const before = net.tries;
    // The clock is the test's from here: the backoff's 2 s to 4 s pass without waiting for them.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      for (let i = 0; i < 30; i++) b.unlock('coin');
      const flushed = b.flush();
      // The storage lease's own short waits (Node has no Web Locks), well inside the least backoff.
      await vi.advanceTimersByTimeAsync(500);
      await flushed;
      const early = attempts;
      const requests = net.tries - before;
      // A pass of at most `concurrency` requests (and a probe per flush), then quiet until the backoff is up.
      expect(early).toBeGreaterThan(0);
      expect(requests).toBeGreaterThan(0);
      expect(requests).toBeLessThanOrEqual(8);
      await vi.advanceTimersByTimeAsync(1_400);
      expect(attempts).toBe(early);
      expect(net.tries - before).toBe(requests);
      expect(b.pending()).toHaveLength(30);
      // Once the backoff is up, it tries again: the quiet above was the backoff, not a stopped queue.
      await vi.advanceTimersByTimeAsync(4_000);
      expect(net.tries - before).toBeGreaterThan(requests);
      expect(b.pending()).toHaveLength(30);
    } finally {
      vi.useRealTimers();
    }
  });

  it('links again when the token has expired', async () => {
    // The relay's tokens live 300 ms; this device believes its token lives an hour (its clock, or
    // the answer it kept, is off), so it does not renew ahead of time: the relay's 401 must be what
    // sends it to link again.
    relay = await startTestRelay({}, { relay: { tokenTtlMs: 300 } });
    const links: string[] = [];
    const claims: number[] = [];
    const net = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const res = await fetch(input, init);
      const url = String(input);
      if (url.endsWith('/v1/rewards') && init?.method === 'POST') claims.push(res.status);
      if (!url.endsWith('/v1/players') || res.status !== 201) return res;
      const player = (await res.json()) as PlayerSession;
      links.push(player.token);
      const believed = links.length === 1 ? { ...player, expiresAt: new Date(Date.now() + 3_600_000).toISOString() } : player;
      return new Response(JSON.stringify(believed), { status: 201, headers: res.headers });
    }) as typeof fetch;
    const b = bus({ fetch: net });
    const first = await b.link('alice');
    await expect.poll(async () => (await fetch(`${relay!.url}/v1/rewards`, { headers: { authorization: `Bearer ${first.token}` } })).status).toBe(401);

    const paid = next(b, 'reward:paid');
    b.unlock('first-coin');
    expect((await paid).record?.status).toBe('paid');
    expect(claims).toEqual([401, 201]);
    expect(links).toHaveLength(2);
    expect(b.player?.token).toBe(links[1]);
  }, 10_000);

  it('keeps its queue in a file across a Node process restart', async () => {
    relay = await startTestRelay();
    const file = join(mkdtempSync(join(tmpdir(), 'rewardbus-client-')), 'queue.json');
    // A process links, goes offline, unlocks, and exits.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/client/fixtures/unlock-offline.ts', relay.url, file]);
    const id = stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(relay.sandbox!.payments()).toHaveLength(0);

    const b = bus({ storage: fileStorage(file) });
    const paid = await next(b, 'reward:paid');
    expect(paid.intent.id).toBe(id);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it('keeps in its file what two buses of one Node process on that file each queued: neither overwrites the other', async () => {
    relay = await startTestRelay();
    const file = join(mkdtempSync(join(tmpdir(), 'rewardbus-client-')), 'queue.json');
    const net = controlledFetch();
    const a = bus({ storage: fileStorage(file), fetch: net.fetch });
    const b = bus({ storage: fileStorage(file), fetch: net.fetch });
    await a.link('alice');
    await b.ready;
    net.offline = true;
    const first = a.unlock('first-coin')!;
    await a.flush();
    const second = b.unlock('level-complete')!;
    await b.flush();
    const stored = Object.keys(JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>);
    expect(stored).toEqual(expect.arrayContaining([`intent:${first}`, `intent:${second}`]));
  });

  it('reuses a ramp session while it lives and asks for a new one after its 15 minutes', async () => {
    relay = await startTestRelay();
    const b = bus();
    await b.link('alice');
    const first = await b.rampSession({ email: 'alice@example.com' });
    expect(await b.rampSession({ email: 'alice@example.com' })).toEqual(first);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse(first.expiresAt) - 30_000 });
    try {
      const second = await b.rampSession({ email: 'alice@example.com' });
      expect(second.sessionToken).not.toBe(first.sessionToken);
    } finally {
      vi.useRealTimers();
    }
    expect(relay.sandbox!.rampSessions.size).toBe(2);
  });
});
