import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RelayClient } from '../../../../src/client/delivery/index.js';
import type { RewardIntent } from '../../../../src/client/events.js';
import { IntentQueue } from '../../../../src/client/queue/index.js';
import { TabLock } from '../../../../src/client/queue/tab-lock.js';
import { LastEarned } from '../../../../src/client/rules/index.js';
import { createWriteBatch, memoryStorage, type RewardStorage } from '../../../../src/client/storage/index.js';
import type { PlayerSession, RewardRecord } from '../../../../src/wire/relay-api.js';
import { fakeLocks } from '../../../helpers/web-locks.js';

/** Tabs of one game: each knock is heard by every other tab's lock. */
function tabs(n: number) {
  const all: TabLock[] = [];
  for (let i = 0; i < n; i++) all.push(new TabLock('game', memoryStorage(), `tab-${i}`, () => all.forEach((t, j) => j !== i && t.yield())));
  return all;
}

const player: PlayerSession = { userId: 'u1', gamertag: 'alice', token: 'tok', expiresAt: '2999-01-01T00:00:00.000Z' };

/** One tab's queue on `storage`, claiming through `claim` (one intent a request), telling `settled` what it settled. */
function queueOn(storage: RewardStorage, claim: RelayClient['claim'], settled: string[]): IntentQueue {
  return new IntentQueue(
    {
      storage,
      writes: createWriteBatch(storage, (err) => {
        throw err;
      }),
      relay: { claim, batchMax: 1 } as unknown as RelayClient,
      sessions: { current: player, forUser: async () => player, expire: () => undefined, waitsForLink: () => false },
      earned: new LastEarned(
        () => undefined,
        () => 0,
      ),
      lockName: 'game',
      tab: 'tab-1',
      knock: () => undefined,
      concurrency: 6,
      retry: { baseMs: 5, maxMs: 20 },
    },
    {
      sent: () => undefined,
      waiting: () => undefined,
      settled: (i) => settled.push(i.id),
      reachable: () => undefined,
      error: (err) => {
        throw err;
      },
    },
  );
}

afterEach(() => vi.unstubAllGlobals());

describe('TabLock (Web Locks, and a channel to knock on)', () => {
  it('keeps the lock between runs: asked for once, and only the first run after taking it is fresh', async () => {
    const { locks, requests } = fakeLocks();
    vi.stubGlobal('navigator', { locks });
    const [a] = tabs(1);
    const fresh: boolean[] = [];
    for (let i = 0; i < 3; i++) await a!.run(async (f) => void fresh.push(f));
    expect(fresh).toEqual([true, false, false]);
    expect(requests()).toBe(1);
    a!.stop();
  });

  it('lets go when another tab knocks, and takes it again, fresh, the next time', async () => {
    const { locks } = fakeLocks();
    vi.stubGlobal('navigator', { locks });
    const [a, b] = tabs(2);
    const order: string[] = [];
    await a!.run(async (f) => void order.push(`a ${f}`));
    await b!.run(async (f) => void order.push(`b ${f}`));
    await a!.run(async (f) => void order.push(`a ${f}`));
    expect(order).toEqual(['a true', 'b true', 'a true']);
    a!.stop();
    b!.stop();
  });

  it('never runs two tabs at once, and a knock heard while waiting in line is kept: nobody waits for good', async () => {
    const { locks } = fakeLocks();
    vi.stubGlobal('navigator', { locks });
    const [a, b] = tabs(2);
    let running = 0;
    let most = 0;
    const work = (who: string, out: string[]) => async () => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 5));
      out.push(who);
      running--;
    };
    const out: string[] = [];
    await a!.run(work('a', out));
    // b asks (a lets go); a asks again while b is still in line, so b lets go after its run.
    const runs = [b!.run(work('b', out)), a!.run(work('a', out)), b!.run(work('b', out))];
    await Promise.all(runs);
    expect(out.sort()).toEqual(['a', 'a', 'b', 'b']);
    expect(most).toBe(1);
    a!.stop();
    b!.stop();
  });
});

describe('IntentQueue keeping the lock', () => {
  let n = 0;
  const intent = (): RewardIntent => ({ id: `i-${++n}`, achievementId: 'coin', occurredAt: new Date().toISOString(), userId: 'u1', attempts: 0, nextAttemptAt: 0 });

  it('sends what it just unlocked from memory while it keeps the lock, as it is being stored: the store is read once, when the lock is taken, and the deletion lands after the write', async () => {
    const { locks } = fakeLocks();
    vi.stubGlobal('navigator', { locks });
    const storage = memoryStorage();
    let reads = 0;
    // Each intent's write is held until its claim has gone: a queue that waited for it would never send.
    const held = new Map<string, () => void>();
    const gates = new Map<string, Promise<void>>();
    const gate = (id: string) => gates.set(id, new Promise<void>((r) => held.set(id, r)));
    let last = Promise.resolve();
    // The queue's store, counting its reads of the queue and applying writes in order, as a store must.
    const counted: RewardStorage = {
      ...storage,
      entries: (prefix) => {
        if (prefix === 'intent:') reads++;
        return storage.entries(prefix);
      },
      write: (sets, dels) =>
        (last = last.then(async () => {
          for (const [k] of sets) await gates.get(k.slice('intent:'.length));
          await storage.write!(sets, dels);
        })),
    };
    const storedWhenSent: boolean[] = [];
    const claim = vi.fn(async (_token: string, key: string) => {
      storedWhenSent.push((await storage.entries('intent:')).some(([k]) => k === `intent:${key}`));
      held.get(key)?.();
      return { ok: true, status: 201, body: { id: `r-${key}`, idempotencyKey: key, achievementId: 'coin', userId: 'u1', sats: 1, status: 'paid', createdAt: '' } as RewardRecord };
    });
    const settled: string[] = [];
    const queue = queueOn(counted, claim, settled);
    for (let i = 0; i < 3; i++) {
      const one = intent();
      // The first takes the lock, so the queue is read back after the write: only later ones go as they are stored.
      if (i > 0) gate(one.id);
      queue.add(one);
      await vi.waitFor(() => expect(settled).toContain(one.id));
    }
    expect(reads).toBe(1);
    expect(storedWhenSent).toEqual([true, false, false]);
    await last;
    expect(await storage.entries('intent:')).toEqual([]);
    queue.stop();
  });

  it('keeps what it unlocks while it reads the store back: an intent the read could not see yet is sent, not let go as finished by another tab', async () => {
    const { locks } = fakeLocks();
    vi.stubGlobal('navigator', { locks });
    const storage = memoryStorage();
    // The store's read of the queue sees it as it was when asked (an IndexedDB transaction begun
    // before the write that follows it), and answers when let go.
    let letRead: (() => void) | undefined;
    const reading = new Promise<void>((r) => (letRead = r));
    let asked!: () => void;
    const readAsked = new Promise<void>((r) => (asked = r));
    let reads = 0;
    const slow: RewardStorage = {
      ...storage,
      entries: async (prefix) => {
        const seen = await storage.entries(prefix);
        if (prefix === 'intent:' && ++reads === 1) {
          asked();
          await reading;
        }
        return seen as never;
      },
    };
    const claim = vi.fn(async (_token: string, key: string) => ({
      ok: true,
      status: 201,
      body: { id: `r-${key}`, idempotencyKey: key, achievementId: 'coin', userId: 'u1', sats: 1, status: 'paid', createdAt: '' } as RewardRecord,
    }));
    const settled: string[] = [];
    const queue = queueOn(slow, claim, settled);
    const first = intent();
    queue.add(first);
    await readAsked;
    // Unlocked while the lock's first read of the store is under way: stored after the read began.
    const second = intent();
    queue.add(second);
    await storage.setMany([]);
    letRead!();
    await vi.waitFor(() => expect(settled.sort()).toEqual([first.id, second.id].sort()));
    queue.stop();
  });
});
