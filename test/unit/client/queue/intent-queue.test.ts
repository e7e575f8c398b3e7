import { describe, expect, it, vi } from 'vitest';
import type { RelayAnswer, RelayClient } from '../../../../src/client/delivery/index.js';
import type { FinalEvent, RewardIntent } from '../../../../src/client/events.js';
import { IntentQueue } from '../../../../src/client/queue/index.js';
import { LastEarned, lastEarned } from '../../../../src/client/rules/index.js';
import { createWriteBatch, memoryStorage, type RewardStorage } from '../../../../src/client/storage/index.js';
import type { PlayerSession, RewardRecord } from '../../../../src/wire/relay-api.js';

const player: PlayerSession = { userId: 'u1', gamertag: 'alice', token: 'tok', expiresAt: '2999-01-01T00:00:00.000Z' };
let n = 0;
const intent = (achievementId = 'coin'): RewardIntent => ({
  id: `intent-${++n}`,
  achievementId,
  occurredAt: new Date(Date.UTC(2026, 10, 23, 10, 0, n)).toISOString(),
  userId: 'u1',
  attempts: 0,
  nextAttemptAt: 0,
});
const answer = (key: string, status: string): RelayAnswer<RewardRecord> => ({
  ok: true,
  status: 201,
  body: { id: `rec-${key}`, idempotencyKey: key, achievementId: 'coin', userId: 'u1', sats: 1, status: status as RewardRecord['status'], createdAt: '2026-11-23T10:00:00.000Z' },
});

/** A queue on `storage` whose relay answers each claim with `reply(key, attempt)`. */
function queueOn(
  reply: (key: string, attempt: number) => RelayAnswer<RewardRecord> | Promise<RelayAnswer<RewardRecord>>,
  {
    storage = memoryStorage(),
    concurrency = 6,
    baseMs = 5,
    batchMax = 1,
    onSettled,
    onSent,
  }: {
    storage?: RewardStorage;
    concurrency?: number;
    baseMs?: number;
    batchMax?: number;
    onSettled?: (intent: RewardIntent) => void;
    onSent?: (intent: RewardIntent, attempt: number) => void;
  } = {},
) {
  const claims = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const claim = vi.fn(async (_token: string, key: string) => {
    claims.set(key, (claims.get(key) ?? 0) + 1);
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    try {
      return await reply(key, claims.get(key)!);
    } finally {
      inFlight--;
    }
  });
  /** The keys of each batch request, in the order sent. */
  const batches: string[][] = [];
  let batchesInFlight = 0;
  let maxBatchesInFlight = 0;
  const claimAll = vi.fn(async (token: string, items: Array<{ idempotencyKey: string }>) => {
    batches.push(items.map((x) => x.idempotencyKey));
    maxBatchesInFlight = Math.max(maxBatchesInFlight, ++batchesInFlight);
    try {
      return await Promise.all(items.map((x) => claim(token, x.idempotencyKey)));
    } finally {
      batchesInFlight--;
    }
  });
  const settled: Array<{ id: string; event: FinalEvent; reason: string | undefined }> = [];
  const reachable: boolean[] = [];
  const waiting: Array<{ id: string; retryAt?: number; reason?: string }> = [];
  const writes = createWriteBatch(storage, (err) => {
    throw err;
  });
  const expire = vi.fn();
  let queue: IntentQueue;
  const earned = new LastEarned(
    (id, ahead) => lastEarned(id, 'u1', queue.list(), [], ahead),
    () => 0,
  );
  queue = new IntentQueue(
    {
      storage,
      writes,
      relay: { claim, claimAll, batchMax } as unknown as RelayClient,
      sessions: { current: player, forUser: async () => player, expire, waitsForLink: () => false },
      earned,
      lockName: 'test',
      tab: `tab-${++n}`,
      concurrency,
      retry: { baseMs, maxMs: baseMs * 4 },
    },
    {
      sent: (i, attempt) => onSent?.(i, attempt),
      waiting: (e) => waiting.push({ id: e.intent.id, ...(e.reason === 'too_early' ? { retryAt: e.retryAt } : { reason: e.reason }) }),
      settled: (i, event, _record, reason) => {
        onSettled?.(i);
        settled.push({ id: i.id, event, reason });
      },
      reachable: (online) => reachable.push(online),
      error: (err) => {
        throw err;
      },
    },
  );
  return {
    queue,
    claims,
    claim,
    batches,
    maxBatchesInFlight: () => maxBatchesInFlight,
    settled,
    waiting,
    reachable,
    expire,
    earned,
    storage,
    writes,
    maxInFlight: () => maxInFlight,
  };
}

describe('IntentQueue', () => {
  it('retries a 5xx with the same idempotency key until the relay answers for good, then forgets it', async () => {
    const q = queueOn((key, attempt) => (attempt < 3 ? { ok: false, status: 503 } : answer(key, 'paid')));
    const i = intent();
    q.queue.add(i);
    await vi.waitFor(() => expect(q.settled).toEqual([{ id: i.id, event: 'reward:paid', reason: undefined }]));
    expect(q.claims.get(i.id)).toBe(3);
    expect(q.claim.mock.calls.every(([token, key]) => token === 'tok' && key === i.id)).toBe(true);
    await q.writes.written;
    expect(q.queue.list()).toEqual([]);
    expect(await q.storage.entries('intent:')).toEqual([]);
  });

  it('deletes its own intent on the final answer, before its listener hears of it; an answer that is no final one keeps it', async () => {
    const heard: Array<{ listed: boolean; deleting: boolean }> = [];
    const q = queueOn((key, attempt) => answer(key, attempt === 1 ? 'pending' : 'held'), {
      onSettled: (i) => heard.push({ listed: q.queue.list().some((x) => x.id === i.id), deleting: q.writes.pending(`intent:${i.id}`) }),
    });
    const i = intent();
    q.queue.add(i);
    await vi.waitFor(() => expect(q.settled).toEqual([{ id: i.id, event: 'reward:held', reason: undefined }]));
    // `pending` was sent again, with the same key; `held` is the relay's to settle: the intent left.
    expect(q.claims.get(i.id)).toBe(2);
    expect(heard).toEqual([{ listed: false, deleting: true }]);
    await q.writes.written;
    expect(await q.storage.entries('intent:')).toEqual([]);
  });

  it('says an attempt is sent once its request has left: what a listener does then does not hold the request back', async () => {
    const heard: Array<{ attempt: number; requested: number }> = [];
    const q = queueOn((key, attempt) => (attempt < 2 ? { ok: false, status: 503 } : answer(key, 'paid')), {
      onSent: (i, attempt) => heard.push({ attempt, requested: q.claims.get(i.id) ?? 0 }),
    });
    const i = intent();
    q.queue.add(i);
    await vi.waitFor(() => expect(q.settled).toEqual([{ id: i.id, event: 'reward:paid', reason: undefined }]));
    expect(heard).toEqual([
      { attempt: 1, requested: 1 },
      { attempt: 2, requested: 2 },
    ]);
  });

  it('adopts intents stored before it existed without storing them again: one another tab sent and deleted meanwhile is not sent', async () => {
    const storage = memoryStorage();
    const kept = intent();
    const sentElsewhere = intent();
    // The bus stored both at unlock(); another tab then sent one and deleted it.
    await storage.setMany([[`intent:${kept.id}`, kept]]);
    const q = queueOn((key) => answer(key, 'paid'), { storage });
    q.queue.adopt([kept, sentElsewhere]);
    expect(q.queue.list().map((i) => i.id)).toEqual([kept.id, sentElsewhere.id]);
    await vi.waitFor(() => expect(q.settled).toHaveLength(1));
    await q.queue.flush();
    expect(q.settled).toEqual([{ id: kept.id, event: 'reward:paid', reason: undefined }]);
    expect(q.claims.has(sentElsewhere.id)).toBe(false);
    expect(await storage.entries('intent:')).toEqual([]);
  });

  it('takes a 4xx refusal as final (rejected, with its code) and never sends it again', async () => {
    const q = queueOn(() => ({ ok: false, status: 422, problem: { type: 'about:blank', title: 'No', status: 422, code: 'not_today' } }));
    const i = intent();
    q.queue.add(i);
    await vi.waitFor(() => expect(q.settled).toHaveLength(1));
    await q.queue.flush();
    expect(q.settled).toEqual([{ id: i.id, event: 'reward:rejected', reason: 'not_today' }]);
    expect(q.claims.get(i.id)).toBe(1);
  });

  it('asks again while the relay says pending; needs_review, held, and a status it does not know, end it as waiting', async () => {
    const statuses = new Map([
      ['a', ['pending', 'needs_review']],
      ['b', ['held']],
      ['c', ['on_the_moon']],
    ]);
    const ids = new Map<string, string>();
    const q = queueOn((key, attempt) => answer(key, statuses.get(ids.get(key)!)![attempt - 1]!));
    const a = intent();
    const b = intent();
    const c = intent();
    ids.set(a.id, 'a').set(b.id, 'b').set(c.id, 'c');
    q.queue.add(a);
    q.queue.add(b);
    q.queue.add(c);
    await vi.waitFor(() => expect(q.settled).toHaveLength(3));
    expect(Object.fromEntries(q.settled.map((s) => [ids.get(s.id), s.event]))).toEqual({ a: 'reward:review', b: 'reward:held', c: 'reward:review' });
    expect([q.claims.get(a.id), q.claims.get(b.id), q.claims.get(c.id)]).toEqual([2, 1, 1]);
  });

  it('keeps an intent the relay calls too early (425), and claims it again at retryAt with the same key and proof', async () => {
    let retryAt = 0;
    let againAt = 0;
    const q = queueOn((key, attempt) => {
      if (attempt > 1) {
        againAt = Date.now();
        return answer(key, 'paid');
      }
      retryAt = Date.now() + 1500;
      const problem = { type: 'about:blank', title: 'Too early', status: 425, code: 'too_early', retryAt: new Date(retryAt).toISOString() };
      return { ok: false, status: 425, retryAfterMs: 2000, problem };
    });
    const i = { ...intent(), proof: 'signed-by-the-game-server' };
    q.queue.add(i);
    await vi.waitFor(() => expect(q.waiting).toHaveLength(1));
    expect(q.settled).toEqual([]);
    expect(q.waiting[0]).toEqual({ id: i.id, retryAt });
    // Coming back online does not hurry it.
    q.queue.setOnline(false);
    q.queue.setOnline(true);
    await q.queue.flush();
    expect(q.claims.get(i.id)).toBe(1);
    await vi.waitFor(() => expect(q.settled).toEqual([{ id: i.id, event: 'reward:paid', reason: undefined }]), { timeout: 3000 });
    // At retryAt (read within the second Retry-After allows), not before, and not a backoff later.
    expect(againAt).toBeGreaterThanOrEqual(retryAt);
    expect(againAt - retryAt).toBeLessThan(500);
    const calls = q.claim.mock.calls as unknown as Array<[string, string, unknown]>;
    expect(calls.map(([, key, body]) => [key, body])).toEqual([1, 2].map(() => [i.id, { achievementId: 'coin', occurredAt: i.occurredAt, proof: 'signed-by-the-game-server' }]));
  });

  it("keeps a guest's intent answered gamertag_required, unsent however often it flushes, until the guest links; then claims it again with the same key", async () => {
    const refused = { ok: false as const, status: 403, problem: { type: 'about:blank', title: 'Link a gamertag first', status: 403, code: 'gamertag_required' } };
    const q = queueOn((key, attempt) => (attempt === 1 ? refused : answer(key, 'paid')));
    const i = intent();
    q.queue.add(i);
    await vi.waitFor(() => expect(q.waiting).toEqual([{ id: i.id, reason: 'gamertag_required' }]));
    await q.writes.written;
    expect(await q.storage.entries('intent:')).toEqual([[`intent:${i.id}`, expect.objectContaining({ waitsForGamertag: true })]]);
    // No timer goes off for it, and neither a flush nor coming back online sends it.
    q.queue.setOnline(false);
    q.queue.setOnline(true);
    await q.queue.flush();
    await new Promise((r) => setTimeout(r, 100));
    expect([q.claims.get(i.id), q.settled, q.queue.list().length]).toEqual([1, [], 1]);

    q.queue.reassign('u1', 'u2');
    await q.queue.flush();
    expect(q.settled).toEqual([{ id: i.id, event: 'reward:paid', reason: undefined }]);
    expect(q.claim.mock.calls.map(([, key]) => key)).toEqual([i.id, i.id]);
  });

  it('keeps intents through a reload of the same storage while the relay is out of reach, and sends them once it is back', async () => {
    const storage = memoryStorage();
    const offline = queueOn(() => ({ ok: false, status: 0, unreachable: true }), { storage, baseMs: 60_000 });
    const queued = [intent(), intent(), intent()];
    for (const i of queued) offline.queue.add(i);
    await vi.waitFor(() => expect(offline.reachable).toEqual([false]));
    await offline.queue.flush();
    offline.queue.stop();
    await offline.writes.written;
    expect(offline.settled).toEqual([]);
    // Each waits its backoff, not hammering: about one pass of requests, then quiet.
    expect(offline.claim.mock.calls.length).toBeLessThanOrEqual(3 + 1);
    expect(offline.queue.list().every((i) => i.nextAttemptAt > Date.now() + 10_000)).toBe(true);

    const back = queueOn((key) => answer(key, 'paid'), { storage });
    await back.queue.load();
    expect(
      back.queue
        .list()
        .map((i) => i.id)
        .sort(),
    ).toEqual(queued.map((i) => i.id).sort());
    // Not before its backoff, even after a reload; then each once.
    await back.queue.flush();
    expect(back.claims.size).toBe(0);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 10 * 60_000 });
    try {
      await back.queue.flush();
      expect(back.settled.map((s) => s.id).sort()).toEqual(queued.map((i) => i.id).sort());
    } finally {
      vi.useRealTimers();
    }
    expect([...back.claims.values()]).toEqual([1, 1, 1]);
    back.queue.stop();
  });

  it('stopped with a claim on its way, takes its answer and deletes it, but sends nothing more: the next in line stays stored', async () => {
    let answer1!: () => void;
    const held = new Promise<void>((r) => (answer1 = r));
    const q = queueOn(
      async (key) => {
        await held;
        return answer(key, 'paid');
      },
      { concurrency: 1 },
    );
    const [first, second] = [intent(), intent()];
    q.queue.add(first);
    q.queue.add(second);
    await vi.waitFor(() => expect(q.claims.size).toBe(1));
    const { sending, answered } = q.queue.stop();
    expect(sending).toEqual([first.id]);
    answer1();
    await answered;
    await q.writes.written;
    expect(q.settled).toEqual([{ id: first.id, event: 'reward:paid', reason: undefined }]);
    expect([...q.claims.keys()]).toEqual([first.id]);
    expect((await q.storage.entries('intent:')).map(([, i]) => (i as RewardIntent).id)).toEqual([second.id]);
  });

  it('asks for a new token after a 401 and sends again with the same key', async () => {
    const q = queueOn((key, attempt) => (attempt === 1 ? { ok: false, status: 401 } : answer(key, 'paid')));
    const i = intent();
    q.queue.add(i);
    await vi.waitFor(() => expect(q.settled).toHaveLength(1));
    expect(q.expire).toHaveBeenCalledWith('u1');
    expect(q.claims.get(i.id)).toBe(2);
  });

  it('drains a backlog a few at a time, each intent once', async () => {
    const q = queueOn(
      async (key) => {
        await new Promise((r) => setTimeout(r, 2));
        return answer(key, 'paid');
      },
      { concurrency: 3 },
    );
    const backlog = Array.from({ length: 20 }, () => intent());
    for (const i of backlog) q.queue.add(i);
    await vi.waitFor(() => expect(q.settled).toHaveLength(20));
    expect(q.maxInFlight()).toBe(3);
    expect([...q.claims.values()].every((c) => c === 1)).toBe(true);
  });

  it('sends a backlog in batches of what the relay takes, one player per batch, and ends each intent on its own answer', async () => {
    const q = queueOn(
      (key, attempt) =>
        key === backlog[3]!.id && attempt === 1
          ? { ok: false, status: 503, retryAfterMs: 1 }
          : key === backlog[5]!.id
            ? { ok: false, status: 404, problem: { type: 'x', title: 'x', status: 404, code: 'unknown_achievement' } }
            : answer(key, 'paid'),
      {
        batchMax: 4,
      },
    );
    const backlog = Array.from({ length: 9 }, () => intent());
    const other = { ...intent(), userId: 'u2' };
    for (const i of [...backlog, other]) q.queue.add(i);
    await vi.waitFor(() => expect(q.settled).toHaveLength(10));
    // 9 of u1 in batches of 4, 4 and 1, one after another; u2's one goes alone (a batch carries
    // one player's token); the 503 inside a batch is sent again with the same key, alone.
    const ids = (is: RewardIntent[]) => is.map((i) => i.id);
    expect(q.batches).toEqual([ids(backlog.slice(0, 4)), ids(backlog.slice(4, 8))]);
    expect(q.maxBatchesInFlight()).toBe(1);
    expect(q.claims.get(other.id)).toBe(1);
    expect(q.claims.get(backlog[3]!.id)).toBe(2);
    expect(q.settled.find((s) => s.id === backlog[5]!.id)).toMatchObject({ event: 'reward:rejected', reason: 'unknown_achievement' });
    expect(q.settled.filter((s) => s.event === 'reward:paid')).toHaveLength(9);
    expect(q.queue.list()).toEqual([]);
  });

  it("stores a batch's answers in one write: a backlog drained costs a write per request, not per intent", async () => {
    const storage = memoryStorage();
    const q = queueOn((key) => answer(key, 'paid'), { storage, batchMax: 25 });
    const backlog = Array.from({ length: 60 }, () => intent());
    for (const i of backlog) q.queue.add(i);
    await q.writes.written;
    const write = vi.spyOn(storage, 'write');
    await vi.waitFor(() => expect(q.settled).toHaveLength(60));
    await q.writes.written;
    expect(q.batches.map((b) => b.length)).toEqual([25, 25, 10]);
    // Each write deletes the intents of one batch, all of them, after the relay's answers.
    const deleted = write.mock.calls.map(([, dels]) => dels.filter((k) => k.startsWith('intent:')).length).filter((n) => n > 0);
    expect(deleted).toEqual([25, 25, 10]);
    expect(await storage.entries('intent:')).toEqual([]);
  });

  it('keeps what unlock() knows of the last time earned in step as intents come and go', async () => {
    const q = queueOn(() => new Promise(() => undefined));
    expect(q.earned.get('coin')).toBeUndefined();
    const first = intent('coin');
    q.queue.add(first);
    expect(q.earned.get('coin')).toBe(Date.parse(first.occurredAt));
    const second = intent('coin');
    q.queue.add(second);
    expect(q.earned.get('coin')).toBe(Date.parse(second.occurredAt));
    q.queue.forget(second.id);
    expect(q.earned.get('coin')).toBe(Date.parse(first.occurredAt));
    q.queue.forget(first.id);
    expect(q.earned.get('coin')).toBeUndefined();
    q.queue.stop();
  });
});
