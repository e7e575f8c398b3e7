import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RewardBus } from '../../src/client/index.js';
import { memoryStorage } from '../../src/client/node.js';
import { busMaker, next } from '../helpers/client.js';
import { stop } from '../helpers/processes.js';
import { startRelayCommand } from '../helpers/relay-command.js';

// The relay in a process of its own, on the right time; the game (this process) on a clock an
// hour behind. The relay counts a cooldown from its own record's createdAt: judged by this clock,
// the reward would look earned an hour in the future.
const dir = mkdtempSync(join(tmpdir(), 'rewardbus-clock-'));
const catalog = join(dir, 'catalog.json');
writeFileSync(catalog, JSON.stringify([{ id: 'gem', title: 'Gem', sats: 3, repeat: { kind: 'cooldown', seconds: 2 } }]));
let relay: Awaited<ReturnType<typeof startRelayCommand>> | undefined;
const { bus, destroyAll } = busMaker(() => relay!.url, memoryStorage);
beforeAll(async () => {
  relay = await startRelayCommand({ RELAY_DATA_DIR: join(dir, 'data'), RELAY_CATALOG: catalog, RELAY_RATE_LIMIT_PER_MINUTE: '0' });
});
afterEach(() => {
  destroyAll();
  vi.useRealTimers();
});
afterAll(async () => {
  if (relay) await stop(relay.child);
  rmSync(dir, { recursive: true, force: true });
});

/** The relay's answers without their Date header, as a page on another origin reads a relay that does not expose it (before 0.3). */
const withoutDate = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const res = await fetch(input, init);
  const headers = new Headers(res.headers);
  headers.delete('date');
  return new Response(res.status === 204 ? null : await res.arrayBuffer(), { status: res.status, statusText: res.statusText, headers });
}) as typeof fetch;

const behindByAnHour = () => {
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  vi.setSystemTime(Date.now() - 3_600_000);
};

/** What unlock() says at once: skipped (and why), or queued. */
function unlockNow(b: RewardBus, id: string) {
  const skipped: string[] = [];
  const off = (s: { reason: string }) => skipped.push(s.reason);
  b.on('reward:skipped', off);
  const intentId = b.unlock(id);
  b.off('reward:skipped', off);
  return { intentId, skipped };
}

describe('a device whose clock is an hour behind the relay’s', () => {
  it.each([
    ['with the Date header of its answers', undefined],
    ['without it (a page on another origin): by the record of its claim', withoutDate],
  ])('unlocks a 2 s cooldown again once 2 s have passed, %s', async (_, fetch) => {
    behindByAnHour();
    const b = bus(fetch ? { fetch } : {});
    await b.link(`alice${fetch ? 'x' : ''}`);
    const paid = next(b, 'reward:paid');
    b.unlock('gem');
    await paid;
    // Before: skipped as `cooldown` for an hour, and never sent.
    expect(unlockNow(b, 'gem').skipped).toEqual(['cooldown']);
    await new Promise((r) => setTimeout(r, 2_500));
    const again = next(b, 'reward:paid');
    expect(unlockNow(b, 'gem')).toMatchObject({ skipped: [], intentId: expect.any(String) });
    expect((await again).sats).toBe(3);
  });

  it('after a reload, before any answer says the relay’s time, sends what only the history says is earned', async () => {
    behindByAnHour();
    const storage = memoryStorage();
    const first = bus({ fetch: withoutDate, storage });
    await first.link('bob');
    const paid = next(first, 'reward:paid');
    first.unlock('gem');
    await paid;
    first.destroy();
    await new Promise((r) => setTimeout(r, 2_500));
    const b = bus({ fetch: withoutDate, storage });
    await b.ready;
    expect(b.player?.gamertag).toBe('bob');
    await expect.poll(async () => (await b.history()).length).toBe(1);
    const again = next(b, 'reward:paid');
    expect(unlockNow(b, 'gem')).toMatchObject({ skipped: [], intentId: expect.any(String) });
    expect((await again).sats).toBe(3);
  });
});

describe('a device whose clock is set back during the session', () => {
  it('unlocks a 2 s cooldown again once 2 s have passed, as the relay counts them', async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    const b = bus();
    await b.link('carol');
    const paid = next(b, 'reward:paid');
    b.unlock('gem');
    await paid;
    expect(unlockNow(b, 'gem').skipped).toEqual(['cooldown']);
    // Set back an hour (by the player, or a sync), after the relay's last answer bounded its clock.
    vi.setSystemTime(Date.now() - 3_600_000);
    await new Promise((r) => setTimeout(r, 2_500));
    const again = next(b, 'reward:paid');
    // Before: the bound kept in this clock's time put the relay an hour back, and skipped it as `cooldown`.
    expect(unlockNow(b, 'gem')).toMatchObject({ skipped: [], intentId: expect.any(String) });
    expect((await again).sats).toBe(3);
  });
});
