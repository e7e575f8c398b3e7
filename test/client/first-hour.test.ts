import 'fake-indexeddb/auto';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { randomId } from '../../src/client/intent/index.js';
import { memoryStorage, type RewardOutcome, type RewardRecord } from '../../src/client/node.js';
import { busesOnTestRelay, controlledFetch, fakeStream, next, noPlayTime } from '../helpers/client.js';

const { bus, start } = busesOnTestRelay(memoryStorage);

describe('what the README promises a game developer', () => {
  it('applies the repeat rules right after link(): a second device makes no request for what was earned', async () => {
    await start({}, noPlayTime);
    const first = bus();
    await first.link('alice');
    const paid = next(first, 'reward:paid');
    first.unlock('level-complete');
    await paid;

    const net = controlledFetch();
    const second = bus({ fetch: net.fetch });
    const skipped: string[] = [];
    second.on('reward:skipped', (e) => skipped.push(e.reason));
    await second.link('alice');
    for (let i = 0; i < 5; i++) expect(second.unlock('level-complete')).toBeUndefined();
    expect(second.unlock('no-such-id')).toBeUndefined();
    await second.flush();
    expect(net.claims.size).toBe(0);
    expect(skipped).toEqual([...Array(5).fill('already_claimed'), 'unknown_achievement']);
  });

  it('works where crypto.randomUUID does not exist (a page over plain http), with unguessable ids', async () => {
    const original = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(crypto), 'randomUUID')!;
    Object.defineProperty(Object.getPrototypeOf(crypto), 'randomUUID', { value: undefined, configurable: true });
    try {
      await start();
      const b = bus();
      await b.link('alice');
      const paid = next(b, 'reward:paid');
      const id = b.unlock('first-coin');
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect((await paid).intent.id).toBe(id);
      // Unguessable there too: 10,000 ids, no repeats, version 4 layout.
      const ids = new Set(Array.from({ length: 10_000 }, randomId));
      expect(ids.size).toBe(10_000);
      for (const i of [...ids].slice(0, 100)) expect(i).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    } finally {
      Object.defineProperty(Object.getPrototypeOf(crypto), 'randomUUID', original);
    }
  });

  it('waits for a slow payment longer than the relay may take, instead of calling it offline', async () => {
    // slowpoke's lookup and payment each answer 1.5 s late, inside the relay's 2 s per call.
    await start({ PAYMENTS_TIMEOUT_MS: '2000' });
    const b = bus({ timeoutMs: 1000 });
    const offline: unknown[] = [];
    b.on('relay:offline', () => offline.push(1));
    await b.link('slowpoke');
    const paid = next(b, 'reward:paid');
    b.unlock('first-coin');
    const outcome = await paid;
    expect(outcome.intent.attempts).toBe(1);
    expect(offline).toEqual([]);
  });

  it('says a reward once when the event stream tells it before the HTTP answer, and shows it as its own', async () => {
    await start();
    const stream = fakeStream();
    const heard: RewardOutcome[] = [];
    // The relay's stream message reaches the bus first; the HTTP answer comes after.
    const net = controlledFetch();
    const b = bus({
      eventSource: stream.Source,
      fetch: async (input, init) => {
        const res = await net.fetch(input, init);
        if (String(input).endsWith('/v1/rewards') && init?.method === 'POST') {
          const record = (await res.clone().json()) as RewardRecord;
          stream.send('reward', record);
          // The HTTP answer comes only once the bus has said the stream's copy.
          await vi.waitFor(() => expect(heard).toHaveLength(1));
        }
        return res;
      },
    });
    b.on('reward:paid', (o) => heard.push(o));
    await b.link('alice');
    const id = b.unlock('first-coin')!;
    await b.flush();
    await expect.poll(() => heard).toHaveLength(1);
    expect(heard[0]!.intent.id).toBe(id);
    expect(heard[0]!.remote).toBe(false);
    expect(b.pending()).toEqual([]);
    expect((await b.history()).filter((r) => r.achievementId === 'first-coin')).toHaveLength(1);

    // Another device's reward, heard only on the stream: said once, as heard.
    const other = { ...heard[0]!.record!, id: 'other-record', idempotencyKey: randomId(), achievementId: 'daily-login' };
    stream.send('reward', other);
    stream.send('reward', other);
    // A third reward after the copy: once it is said, the copy before it has been heard too.
    const third = { ...other, id: 'third-record', idempotencyKey: randomId(), achievementId: 'coin-streak' };
    stream.send('reward', third);
    await expect.poll(() => heard.map((o) => o.record?.id)).toEqual([heard[0]!.record!.id, 'other-record', 'third-record']);
    expect(heard[1]!.remote).toBe(true);
  });

  it('runs the README Node example to the end, and the process exits by itself', async () => {
    const relay = await start();
    const file = join(mkdtempSync(join(tmpdir(), 'rewardbus-node-')), 'queue.json');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/client/fixtures/node-example.ts', relay.url, file], { timeout: 15_000 });
    expect(stdout.trim()).toBe('+21 sats for alice');
  });

  it('opens a new ramp session after a purchase ended in the old one', async () => {
    await start();
    const b = bus();
    await b.link('alice');
    const first = await b.rampSession({ email: 'alice@example.com' });
    expect(await b.rampSession({ email: 'alice@example.com' })).toEqual(first);
    b.rampEnded({ type: 'success', data: { ok: true } });
    const second = await b.rampSession({ email: 'alice@example.com' });
    expect(second.sessionToken).not.toBe(first.sessionToken);
  });
});
