// A relay with a human check at link (`verifyLink`, a captcha): the client's link() carries the
// check, and a lapsed token's renewal that the check refuses keeps the player's intents until the
// game links again with one (found by a red-team pass: they were ended as player_unknown).
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { memoryStorage } from '../../src/client/node.js';
import type { VerifyLink } from '../../src/relay/index.js';
import type { PlayerSession } from '../../src/wire/relay-api.js';
import { busesOnTestRelay, controlledFetch, lapsedPlayer, next, noPlayTime, playAndLinkAnswers } from '../helpers/client.js';
import { heardOutcomes } from '../helpers/other-server.js';

const { bus, start } = busesOnTestRelay(memoryStorage);

/**
 * A captcha's verification that passes `ok` only, once `on` (a relay may turn it on after its
 * players linked); `seen`: the humanCheck of every link it was asked about.
 */
function captcha(on = true) {
  const c = { on, seen: [] as Array<string | undefined> };
  const verifyLink: VerifyLink = (_request, { humanCheck }) => {
    if (!c.on) return true;
    c.seen.push(humanCheck);
    return humanCheck === 'ok';
  };
  return Object.assign(c, { relay: { relay: { ...noPlayTime.relay, verifyLink } } });
}

describe('a relay with a human check at link', () => {
  it('link() sends the humanCheck; a check refused rejects with link_refused and links no one', async () => {
    const check = captcha();
    await start({}, check.relay);
    const b = bus();
    await expect(b.link('alice', { humanCheck: 'robot' })).rejects.toMatchObject({ code: 'link_refused' });
    expect(b.player).toBeUndefined();
    const player = await b.link('alice', { humanCheck: 'ok' });
    expect(b.player?.userId).toBe(player.userId);
    expect(check.seen).toEqual(['robot', 'ok']);
  });

  it('keeps a lapsed player’s intent when the check refuses the renewal, says player:check once, and pays it after link() with a check', async () => {
    const check = captcha(false);
    const relay = await start({}, check.relay);
    const storage = await lapsedPlayer(bus, memoryStorage());
    check.on = true;
    const b = bus({ storage });
    const events = heardOutcomes(b);
    const asked: string[] = [];
    b.on('player:check', (e) => asked.push(e.gamertag));
    const checks: unknown[] = [];
    b.on('player:check', (e) => checks.push(e));
    const id = b.unlock('first-coin');
    // The renewal (a link with no check) reached the relay's check and was refused.
    await expect.poll(() => check.seen.length).toBe(1);
    await b.flush();
    // Before, the refusal made alice unknown: the intent said rejected (player_unknown) and deleted, never paid.
    expect(events).toEqual([]);
    expect(b.pending().map((i) => [i.id, i.attempts])).toEqual([[id, 0]]);
    expect(asked).toEqual(['alice']);
    expect(checks).toEqual([{ gamertag: 'alice', userId: b.player?.userId, current: true }]);
    // No renewal again and again: the bus waits for the game's link (retries are 20 ms apart here).
    b.unlock('daily-login');
    await b.flush();
    await delay(300);
    expect(check.seen).toEqual([undefined]);
    expect(asked).toEqual(['alice']);
    expect(b.pending()).toHaveLength(2);

    const paid = next(b, 'reward:paid');
    await b.link('alice', { humanCheck: 'ok' });
    // Under the key minted at unlock().
    expect((await paid).record).toMatchObject({ idempotencyKey: id, status: 'paid' });
    await expect.poll(() => b.pending()).toEqual([]);
    expect(events).toEqual(['reward:paid', 'reward:paid']);
    expect(relay.sandbox!.payments()).toHaveLength(2);
    expect(check.seen).toEqual([undefined, 'ok']);
  });

  it('says player:check with current: false for a player other than the one linked now: their intents wait, the current one’s are paid', async () => {
    const check = captcha(false);
    await start({}, check.relay);
    // alice earned a coin offline, and her token lapsed before it was sent.
    const storage = memoryStorage();
    const net = controlledFetch();
    const first = bus({ storage, fetch: net.fetch });
    const alice = await first.link('alice');
    net.offline = true;
    const id = first.unlock('first-coin');
    await first.flush();
    first.destroy();
    await storage.setMany([[`session:${alice.userId}`, { ...alice, expiresAt: new Date(0).toISOString() } satisfies PlayerSession]]);
    check.on = true;
    // Her renewal (a link with no check) goes nowhere until the game has linked bob.
    let hold = true;
    const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (hold && String(input).endsWith('/v1/players') && !String(init?.body).includes('humanCheck')) throw new TypeError('fetch failed');
      return globalThis.fetch(input, init);
    }) as typeof globalThis.fetch;
    const b = bus({ storage, fetch });
    const checks: unknown[] = [];
    b.on('player:check', (e) => checks.push(e));
    const bob = await b.link('bob', { humanCheck: 'ok' });
    hold = false;
    await b.flush();
    // Before, it said { gamertag: 'alice' } alone while bob played: linking alice, as the docs said, would have made her the player.
    await expect.poll(() => checks).toEqual([{ gamertag: 'alice', userId: alice.userId, current: false }]);
    expect(b.player?.userId).toBe(bob.userId);
    const paid = next(b, 'reward:paid');
    b.unlock('level-complete');
    expect(await paid).toMatchObject({ gamertag: 'bob' });
    expect(b.pending().map((i) => i.id)).toEqual([id]);
    expect(check.seen).toEqual(['ok', undefined]);
  });

  it.each([
    ['heard on the tab channel', true],
    ['found in the shared storage (no BroadcastChannel)', false],
  ])('ends the wait in every tab once one links the player with a check (%s): the next unlock is sent from this tab', async (_, channel) => {
    if (!channel) vi.stubGlobal('BroadcastChannel', undefined);
    try {
      const check = captcha(false);
      await start({}, check.relay);
      const storage = await lapsedPlayer(bus, memoryStorage());
      check.on = true;
      // Two tabs of the game, on one storage.
      const a = bus({ storage });
      const b = bus({ storage });
      const linkedInA: string[] = [];
      a.on('player:linked', (p) => linkedInA.push(p.gamertag));
      a.unlock('first-coin');
      await expect.poll(() => check.seen.length).toBeGreaterThan(0);
      await a.flush();
      expect(a.pending()).toHaveLength(1);
      // The game showed its captcha in tab b.
      await b.link('alice', { humanCheck: 'ok' });
      // Tab b sent what it had: from here on, nothing makes it send again.
      await b.flush();
      const paidHere: string[] = [];
      a.on('reward:paid', (o) => void (o.remote || paidHere.push(o.intent.id)));
      const id = a.unlock('daily-login');
      // Before, tab a kept waiting for the check (until a reload): its new unlock stayed queued there.
      await expect.poll(() => paidHere, { timeout: 3_000 }).toContain(id);
      await expect.poll(() => a.pending()).toEqual([]);
      if (channel) expect(linkedInA).toEqual(['alice']);
      expect(check.seen.filter((x) => x === 'ok')).toEqual(['ok']);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('balance mode: balance() and withdraw() reject with link_refused, one renewal asked and player:check said once, until link() with a check', async () => {
    const check = captcha(false);
    await start({ RELAY_PAYOUT_MODE: 'balance' }, check.relay);
    const storage = await lapsedPlayer(bus, memoryStorage());
    check.on = true;
    const b = bus({ storage });
    const asked: string[] = [];
    b.on('player:check', (e) => asked.push(e.gamertag));
    await expect(b.balance()).rejects.toMatchObject({ code: 'link_refused' });
    await expect(b.withdraw()).rejects.toMatchObject({ code: 'link_refused' });
    expect(asked).toEqual(['alice']);
    expect(check.seen).toEqual([undefined]);
    await b.link('alice', { humanCheck: 'ok' });
    expect((await b.balance()).sats).toBe(0);
  });

  it('balance mode: sends no heartbeat while the player waits for the check, and beats again once linked', async () => {
    const check = captcha(false);
    await start({ RELAY_PAYOUT_MODE: 'balance' }, check.relay);
    const { fetch, answers } = playAndLinkAnswers();
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'], shouldAdvanceTime: true });
    try {
      const b = bus({ fetch });
      const checks: string[] = [];
      b.on('player:check', (e) => checks.push(e.gamertag));
      await b.link('alice');
      await expect.poll(() => answers).toEqual(['/v1/players 201', '/v1/play 200']);
      // Two days on, the token (a day's life) has lapsed, and the relay now checks links.
      check.on = true;
      vi.setSystemTime(Date.now() + 2 * 86_400_000);
      await vi.advanceTimersByTimeAsync(20_000);
      await expect.poll(() => checks).toEqual(['alice']);
      expect(answers.slice(2)).toEqual(['/v1/play 401', '/v1/players 403']);
      // Before, a beat went every 20 s with the lapsed token, each refused (401).
      await vi.advanceTimersByTimeAsync(60_000);
      await delay(50);
      expect(answers.slice(4)).toEqual([]);
      await b.link('alice', { humanCheck: 'ok' });
      await vi.advanceTimersByTimeAsync(20_000);
      await expect.poll(() => answers.slice(4)).toEqual(['/v1/players 201', '/v1/play 200']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('in balance mode, with guests refused by the check: asks for a guest once, says each unlock waiting for a gamertag, and credits them to the player the game links', async () => {
    const check = captcha();
    await start({ RELAY_PAYOUT_MODE: 'balance' }, check.relay);
    const b = bus();
    const waiting: string[] = [];
    b.on('reward:waiting', (e) => e.reason === 'gamertag_required' && waiting.push(e.intent.id));
    const credited: string[] = [];
    b.on('reward:credited', (o) => credited.push(o.intent.id));
    const first = b.unlock('first-coin')!;
    await expect.poll(() => waiting).toEqual([first]);
    const second = b.unlock('daily-login')!;
    await expect.poll(() => waiting).toEqual([first, second]);
    await b.flush();
    // Before, every unlock asked for a guest again, each refused, and none was said waiting.
    expect(check.seen).toEqual([undefined]);
    expect(b.player).toBeUndefined();

    const player = await b.link('alice', { humanCheck: 'ok' });
    await expect.poll(() => credited.sort()).toEqual([first, second].sort());
    expect(b.pending()).toEqual([]);
    expect((await b.balance()).sats).toBe(31);
    expect(player.guest).toBeUndefined();
  });

  it('in balance mode, with guests refused by the check: a tab that never heard the other tab link (no BroadcastChannel) takes the player it stored at its next unlock', async () => {
    vi.stubGlobal('BroadcastChannel', undefined);
    try {
      const check = captcha();
      await start({ RELAY_PAYOUT_MODE: 'balance' }, check.relay);
      const storage = memoryStorage();
      // Two tabs of the game, on one storage.
      const a = bus({ storage });
      const b = bus({ storage });
      const credited: string[] = [];
      a.on('reward:credited', (o) => credited.push(o.intent.id));
      const waiting = next(a, 'reward:waiting');
      a.unlock('first-coin');
      await waiting;
      // The game showed its captcha in tab b.
      await b.link('alice', { humanCheck: 'ok' });
      await b.flush();
      const second = a.unlock('daily-login')!;
      // Before, tab a asked for nothing more once refused, and both unlocks waited there for the page's life.
      await expect.poll(() => a.player?.gamertag).toBe('alice');
      await a.flush();
      await expect.poll(() => a.pending()).toEqual([]);
      expect(credited).toContain(second);
      // A guest asked for once per tab at most (each refused), then the link's check.
      expect(check.seen.filter((x) => x === undefined).length).toBeLessThanOrEqual(2);
      expect(check.seen.filter((x) => x !== undefined)).toEqual(['ok']);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
