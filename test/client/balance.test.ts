import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryStorage, RewardBusError, type RewardBusEvents } from '../../src/client/node.js';
import { DEFAULT_CATALOG } from '../../src/relay/index.js';
import { busesOnTestRelay, controlledFetch, fetchEventSource, next, playAndLinkAnswers } from '../helpers/client.js';
import { fakeLocks } from '../helpers/web-locks.js';

const balanceMode = { RELAY_PAYOUT_MODE: 'balance', RELAY_MIN_WITHDRAWAL_SATS: '10' };
/** A mixed catalog: the demo's, credited, and one achievement paid at once, to a gamertag. */
const mixed = { relay: { catalog: [...DEFAULT_CATALOG, { id: 'gem', title: 'Gem', sats: 5, repeat: { kind: 'cooldown' as const, seconds: 0 }, payout: 'instant' as const }] } };

/** A fetch that records each request as `METHOD /path` and can answer the next withdrawals itself. */
function recordingFetch() {
  const r = {
    seen: [] as string[],
    keys: [] as string[],
    /** Answers the next n withdrawals with 503 (nothing paid), or loses the network. */
    failWithdrawals: 0,
    /** `gateway`: the request reaches the relay, and a proxy in front answers 502 (the relay's answer lost). */
    failWith: 'status' as 'status' | 'network' | 'gateway',
    /** Answers the next n `POST /v1/players` with 429 (the door's rate limit: nothing was decided). */
    limitPlayers: 0,
    fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
      const path = new URL(String(input)).pathname;
      const line = `${init?.method ?? 'GET'} ${path}`;
      r.seen.push(line);
      if (line === 'POST /v1/players' && r.limitPlayers > 0) {
        r.limitPlayers--;
        return new Response(JSON.stringify({ code: 'rate_limited', status: 429 }), { status: 429, headers: { 'content-type': 'application/problem+json', 'retry-after': '0' } });
      }
      if (line === 'POST /v1/withdrawals') {
        r.keys.push(new Headers(init?.headers).get('idempotency-key')!);
        if (r.failWithdrawals > 0) {
          r.failWithdrawals--;
          if (r.failWith === 'network') throw new TypeError('fetch failed');
          if (r.failWith === 'gateway') {
            await fetch(input, init);
            return new Response('<html><body>502 Bad Gateway</body></html>', { status: 502, headers: { 'content-type': 'text/html' } });
          }
          return new Response(JSON.stringify({ code: 'service_unavailable', status: 503 }), { status: 503, headers: { 'content-type': 'application/problem+json' } });
        }
      }
      return fetch(input, init);
    }) as typeof fetch,
  };
  return r;
}

const { bus, start } = busesOnTestRelay(() => memoryStorage());
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

/** Every event of these names the bus says, as `<event> <detail>`. */
function hear(b: ReturnType<typeof bus>) {
  const heard: string[] = [];
  b.on('reward:credited', (o) => heard.push(`reward:credited ${o.intent.achievementId} ${o.sats}`));
  b.on('balance:changed', (v) => heard.push(`balance:changed ${v.sats}`));
  b.on('player:merged', (m) => heard.push(`player:merged ${m.movedSats}`));
  for (const e of ['withdrawal:paid', 'withdrawal:failed', 'withdrawal:review'] as const) {
    b.on(e, ((w: Parameters<RewardBusEvents[typeof e]>[0]) => heard.push(`${e} ${w.withdrawal.sats} ${w.gamertag}`)) as never);
  }
  return heard;
}

describe('balance mode on the game side', () => {
  /** A guest that earned its first coin on a relay in balance mode, the clock's date in the test's hands. */
  async function guestWithFirstCoin() {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    await start(balanceMode);
    const net = recordingFetch();
    const b = bus({ fetch: net.fetch });
    const heard = hear(b);
    b.unlock('first-coin');
    await expect.poll(() => heard).toContain('reward:credited first-coin 21');
    return { net, b, heard, guest: b.player! };
  }

  it("links a guest only once its claim on the way is answered: the credit is the player's, not left on the retired guest", async () => {
    // The guest's first claim is held at the relay, past its token check, until released.
    let atRelay!: () => void;
    const claimHeld = new Promise<void>((r) => (atRelay = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let claims = 0;
    await start(balanceMode, {
      relay: {
        verifyClaim: async () => {
          if (claims++ === 0) {
            atRelay();
            await released;
          }
          return true;
        },
      },
    });
    const b = bus();
    const heard = hear(b);
    b.unlock('first-coin');
    await claimHeld;
    const linking = b.link('ada');
    // A link sent at once merges before the claim is written (it is answered while the claim is held);
    // a link that waits for the claim is not, and the claim is let go after a moment.
    await Promise.race([linking, delay(300)]);
    release();
    const player = await linking;
    expect(player).toMatchObject({ gamertag: 'ada', merge: { movedSats: 21 } });
    await expect.poll(() => heard).toContain('reward:credited first-coin 21');
    expect(await b.balance()).toMatchObject({ sats: 21 });
  });

  it('earns as a guest from the first unlock, merges at link, and withdraws to the gamertag', async () => {
    const relay = await start(balanceMode);
    const b = bus();
    const heard = hear(b);
    const credited = next(b, 'reward:credited');
    b.unlock('first-coin');
    const outcome = await credited;
    expect(outcome).toMatchObject({ sats: 21, remote: false, record: { status: 'credited' } });
    expect(b.player).toMatchObject({ guest: true, gamertag: '' });
    expect(b.pending()).toEqual([]);
    await expect.poll(() => heard).toContain('balance:changed 21');
    expect((await b.balance()).sats).toBe(21);
    await expect(b.withdraw()).rejects.toMatchObject({ code: 'gamertag_required' });

    const guestId = b.player!.userId;
    const player = await b.link('ada');
    expect(player.merge).toMatchObject({ guestId, moved: 1, movedSats: 21, dropped: [] });
    expect(b.player).toMatchObject({ gamertag: 'ada' });
    expect(b.player!.guest).toBeUndefined();
    await expect.poll(() => heard).toContain('player:merged 21');
    expect((await b.balance()).sats).toBe(21);

    const w = await b.withdraw(15);
    expect(w).toMatchObject({ sats: 15, status: 'paid' });
    expect(relay.sandbox!.payments().filter((p) => p.gamertag === 'ada')).toHaveLength(1);
    await expect.poll(() => heard).toContain('withdrawal:paid 15 ada');
    await expect.poll(() => heard.at(-1)).toBe('balance:changed 6');
    // Said once, though the event stream may tell of it too.
    expect(heard.filter((h) => h.startsWith('withdrawal:'))).toEqual(['withdrawal:paid 15 ada']);
    await expect(b.withdraw(5)).rejects.toSatisfy((e) => e instanceof RewardBusError && e.code === 'below_minimum');
    await expect(b.withdraw(50)).rejects.toMatchObject({ code: 'insufficient_balance' });
  });

  /** Ada's bus, its requests through a recordingFetch, with first-coin's 21 sats credited. */
  async function adaCredited() {
    const relay = await start(balanceMode);
    const net = recordingFetch();
    const b = bus({ fetch: net.fetch });
    await b.link('ada');
    const credited = next(b, 'reward:credited');
    b.unlock('first-coin');
    await credited;
    return { relay, net, b };
  }

  it('sends a withdrawal again under the same key while nothing was paid, and pays it once', async () => {
    const { relay, net, b } = await adaCredited();
    net.failWithdrawals = 2;
    net.failWith = 'status';
    const w = await b.withdraw();
    expect(w).toMatchObject({ sats: 21, status: 'paid' });
    expect(net.keys).toHaveLength(3);
    expect(new Set(net.keys).size).toBe(1);
    net.failWithdrawals = 1;
    net.failWith = 'network';
    const refused = b.withdraw();
    await expect(refused).rejects.toMatchObject({ code: 'below_minimum' });
    expect(new Set(net.keys).size).toBe(2);
    expect(relay.sandbox!.payments().filter((p) => p.gamertag === 'ada')).toHaveLength(1);
  });

  it('sends a withdrawal again under the same key when a proxy answers 5xx after the relay paid it, and is answered paid: one payment', async () => {
    const { relay, net, b } = await adaCredited();
    net.failWithdrawals = 1;
    net.failWith = 'gateway';
    expect(await b.withdraw()).toMatchObject({ sats: 21, status: 'paid' });
    expect(net.keys).toHaveLength(2);
    expect(new Set(net.keys).size).toBe(1);
    expect(relay.sandbox!.payments().filter((p) => p.gamertag === 'ada')).toHaveLength(1);
  });

  it('hears a held withdrawal settled later on the event stream as withdrawal events, never as a reward outcome', async () => {
    const relay = await start({ ...balanceMode, RELAY_HOLD_ABOVE_SATS: '25', RELAY_ADMIN_TOKEN: 'admin-token-0123456789abcdefghijklmnop' });
    const stream = fetchEventSource();
    const b = bus({ eventSource: stream.Source });
    const heard = hear(b);
    for (const e of ['reward:paid', 'reward:failed', 'reward:rejected', 'reward:review', 'reward:held'] as const) b.on(e, () => heard.push(e));
    await b.link('ada');
    await expect.poll(() => stream.urls.length).toBe(1);
    // Each claim is under the hold; the withdrawal of both is above it.
    b.unlock('first-coin');
    b.unlock('daily-login');
    await expect.poll(() => heard).toContain('reward:credited first-coin 21');
    await expect.poll(() => heard).toContain('reward:credited daily-login 10');
    await expect.poll(() => heard.at(-1)).toBe('balance:changed 31');
    const held = await b.withdraw();
    expect(held).toMatchObject({ sats: 31, status: 'held' });
    expect(heard).toContain('withdrawal:review 31 ada');
    const approve = await fetch(`${relay.url}/admin/api/review/${held.id}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${relay.adminToken}`, 'x-operator': 'ops-ann' },
    });
    expect(approve.status).toBe(200);
    await expect.poll(() => heard).toContain('withdrawal:paid 31 ada');
    expect(heard.filter((h) => h.startsWith('reward:') || h.startsWith('withdrawal:'))).toEqual([
      'reward:credited first-coin 21',
      'reward:credited daily-login 10',
      'withdrawal:review 31 ada',
      'withdrawal:paid 31 ada',
    ]);
    expect((await b.history()).find((r) => r.id === held.id)).toMatchObject({ kind: 'withdrawal', status: 'paid' });
    expect(relay.sandbox!.payments().map((p) => [p.gamertag, p.amount])).toEqual([['ada', '31000']]);
  });

  it('makes one guest for two tabs that unlock at once: the tab that waited takes the one stored', async () => {
    const { locks } = fakeLocks();
    // The first guest's answer is held until the other tab has asked too: for the guest itself, or
    // for its turn to make one.
    let bothAsked!: () => void;
    const held = new Promise<void>((r) => (bothAsked = r));
    let turns = 0;
    vi.stubGlobal('navigator', {
      locks: {
        request: (name: string, work: () => Promise<unknown>) => {
          if (name.endsWith(':guest') && ++turns === 2) bothAsked();
          return locks.request(name, work);
        },
      },
    });
    await start(balanceMode);
    const storage = memoryStorage();
    const guests: string[] = [];
    const counting = (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (new URL(String(input)).pathname === '/v1/players') {
        guests.push(String(init?.body));
        if (guests.length === 2) bothAsked();
        await held;
      }
      return fetch(input, init);
    }) as typeof fetch;
    const [a, b] = [bus({ storage, fetch: counting }), bus({ storage, fetch: counting })];
    await Promise.all([a.ready, b.ready]);
    const credited = [next(a, 'reward:credited'), next(b, 'reward:credited')];
    a.unlock('first-coin');
    b.unlock('level-complete');
    await Promise.all(credited);
    expect(guests).toEqual(['{}']);
    expect(a.player?.guest).toBe(true);
    expect(b.player?.userId).toBe(a.player!.userId);
    expect((await a.balance()).sats).toBe((await b.balance()).sats);
  });

  it('sends what a guest still had queued as the player, once the guest links and merges', async () => {
    await start(balanceMode);
    const net = recordingFetch();
    let claimsDown = false;
    const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (claimsDown && String(input).includes('/v1/rewards') && init?.method === 'POST') throw new TypeError('fetch failed');
      return net.fetch(input, init);
    }) as typeof globalThis.fetch;
    const b = bus({ fetch });
    const heard = hear(b);
    b.unlock('first-coin');
    await expect.poll(() => heard).toContain('reward:credited first-coin 21');
    const guest = b.player!;
    claimsDown = true;
    const offline = next(b, 'relay:offline');
    b.unlock('daily-login');
    await offline;
    expect(b.pending().map((i) => i.userId)).toEqual([guest.userId]);

    const player = await b.link('ada');
    expect(player.merge).toMatchObject({ moved: 1, movedSats: 21 });
    expect(b.pending().map((i) => i.userId)).toEqual([player.userId]);
    claimsDown = false;
    await b.flush();
    await expect.poll(() => heard).toContain('reward:credited daily-login 10');
    expect(b.pending()).toEqual([]);
    expect((await b.balance()).sats).toBe(31);
    expect(net.seen.filter((l) => l === 'POST /v1/players')).toHaveLength(2);
  });

  it("keeps a guest's achievement paid at once, parked and asked once, across a reload, and has it paid to the player once the guest links", async () => {
    const relay = await start(balanceMode, mixed);
    const storage = memoryStorage();
    const net = controlledFetch();
    const said: string[] = [];
    const listen = (b: ReturnType<typeof bus>) => {
      b.on('reward:credited', (o) => said.push(`credited ${o.intent.achievementId}`));
      b.on('reward:rejected', (o) => said.push(`rejected ${o.intent.achievementId} ${o.reason}`));
      b.on('reward:paid', (o) => said.push(`paid ${o.intent.achievementId} ${o.sats} ${o.gamertag}`));
      b.on('reward:waiting', (e) => said.push(`waiting ${e.intent.achievementId} ${e.reason}`));
    };
    const first = bus({ storage, fetch: net.fetch });
    listen(first);
    first.unlock('first-coin');
    await expect.poll(() => said).toContain('credited first-coin');
    const id = first.unlock('gem')!;
    await expect.poll(() => said).toContain('waiting gem gamertag_required');
    expect(first.pending().map((i) => [i.id, i.waitsForGamertag])).toEqual([[id, true]]);
    // The guest plays on: other claims go, the parked one is not asked again (its retry time long past).
    first.unlock('daily-login');
    await expect.poll(() => said).toContain('credited daily-login');
    await first.flush();
    await delay(300);
    await first.flush();
    expect(net.claims.get(id)).toBe(1);

    // A reload: the same storage, a new bus. Still parked, still not asked.
    first.destroy();
    const b = bus({ storage, fetch: net.fetch });
    listen(b);
    await b.ready;
    await b.flush();
    await delay(300);
    expect(b.pending().map((i) => [i.id, i.waitsForGamertag])).toEqual([[id, true]]);
    expect(net.claims.get(id)).toBe(1);
    expect(relay.sandbox!.payments()).toEqual([]);

    // Linked: the same intent, under the same key, is the player's and paid to the gamertag once.
    const player = await b.link('ada');
    expect(player.merge).toMatchObject({ moved: 2, movedSats: 31 });
    await expect.poll(() => said).toContain('paid gem 5 ada');
    expect(net.claims.get(id)).toBe(2);
    expect(b.pending()).toEqual([]);
    expect((await b.history()).find((r) => r.idempotencyKey === id)).toMatchObject({ status: 'paid', userId: player.userId, sats: 5 });
    expect(relay.sandbox!.payments().map((p) => [p.gamertag, p.amount])).toEqual([['ada', '5000']]);
    expect(said.filter((s) => s.startsWith('rejected'))).toEqual([]);
    expect(said.filter((s) => s.includes('gem'))).toEqual(['waiting gem gamertag_required', 'paid gem 5 ada']);
  });

  it("has a guest's achievement paid at once, parked in one tab, paid once when another tab links the gamertag", async () => {
    vi.stubGlobal('navigator', { locks: fakeLocks().locks });
    const relay = await start(balanceMode, mixed);
    const storage = memoryStorage();
    const net = controlledFetch();
    const [a, b] = [bus({ storage, fetch: net.fetch }), bus({ storage, fetch: net.fetch })];
    await Promise.all([a.ready, b.ready]);
    const said: string[] = [];
    for (const tab of [a, b]) {
      tab.on('reward:waiting', (e) => said.push(`waiting ${e.intent.achievementId} ${e.reason}`));
      tab.on('reward:paid', (o) => said.push(`paid ${o.intent.achievementId} ${o.gamertag} ${o.remote ? 'remote' : 'own'}`));
    }
    const credited = next(a, 'reward:credited');
    a.unlock('first-coin');
    await credited;
    const id = a.unlock('gem')!;
    await expect.poll(() => said).toContain('waiting gem gamertag_required');
    await b.link('ada');
    await expect.poll(() => relay.sandbox!.payments().map((p) => [p.gamertag, p.amount])).toEqual([['ada', '5000']]);
    await expect.poll(() => said.filter((s) => s.startsWith('paid')).sort()).toEqual(['paid gem ada own', 'paid gem ada remote']);
    expect(net.claims.get(id)).toBe(2);
    expect([a.pending(), b.pending()]).toEqual([[], []]);
  });

  it("renews a guest's lapsed token before its next claim: the same guest earns on, its balance whole", async () => {
    const { net, b, heard, guest } = await guestWithFirstCoin();

    // The player comes back two days later: the guest's token (a day's life) has lapsed.
    vi.setSystemTime(Date.now() + 2 * 86_400_000);
    b.unlock('daily-login');
    await expect.poll(() => heard).toContain('reward:credited daily-login 10');
    expect(b.player).toMatchObject({ userId: guest.userId, guest: true });
    expect(b.player!.token).not.toBe(guest.token);
    expect((await b.balance()).sats).toBe(31);
    // Made once, renewed once.
    expect(net.seen.filter((l) => l === 'POST /v1/players')).toHaveLength(2);
  });

  it("waits, intent kept, when the renewal of a guest's lapsed token is rate limited (429), and earns once it is renewed", async () => {
    const { net, b, heard, guest } = await guestWithFirstCoin();
    const rejected: string[] = [];
    b.on('reward:rejected', (o) => rejected.push(`${o.intent.achievementId} ${o.reason}`));

    vi.setSystemTime(Date.now() + 2 * 86_400_000);
    net.limitPlayers = 1;
    b.unlock('daily-login');
    // Too many requests is no answer about the guest: the intent waits and goes once renewed.
    await expect.poll(() => heard).toContain('reward:credited daily-login 10');
    expect(rejected).toEqual([]);
    expect(b.player).toMatchObject({ userId: guest.userId, guest: true });
    expect(net.seen.filter((l) => l === 'POST /v1/players')).toHaveLength(3);
  });

  it("says a guest's intents rejected (player_unknown) once its token lapsed past renewal, asking the relay once, and the next unlock earns as a new guest", async () => {
    const { net, b, heard } = await guestWithFirstCoin();

    // 32 days on: the token lapsed more than 30 days ago, and renews nothing.
    vi.setSystemTime(Date.now() + 32 * 86_400_000);
    const rejected = next(b, 'reward:rejected');
    b.unlock('daily-login');
    expect(await rejected).toMatchObject({ reason: 'player_unknown' });
    await b.flush();
    expect(b.pending()).toEqual([]);
    // Made once, asked to renew once: nothing asks again by itself.
    const asked = net.seen.filter((l) => l === 'POST /v1/players').length;
    expect(asked).toBe(2);
    // That guest is gone: the device plays on as a new one, from its next unlock.
    const gone = b.player?.userId;
    expect(b.player).toBeUndefined();
    // The day's login, refused to the old guest, is earned by the new one.
    b.unlock('daily-login');
    await expect.poll(() => heard).toContain('reward:credited daily-login 10');
    expect(b.player).toMatchObject({ guest: true });
    expect(b.player!.userId).not.toBe(gone);
    expect(net.seen.filter((l) => l === 'POST /v1/players')).toHaveLength(3);
  });

  it('in instant mode makes no guest, asks no balance and sends no heartbeat', async () => {
    await start();
    const net = recordingFetch();
    const b = bus({ fetch: net.fetch });
    b.unlock('first-coin');
    await b.ready;
    await b.catalog();
    await b.flush();
    expect(b.player).toBeUndefined();
    await b.link('ada');
    await next(b, 'reward:paid');
    expect(net.seen.filter((l) => /players|balance|play|withdrawals/.test(l))).toEqual(['POST /v1/players']);
  });

  it('keeps the balance and sends heartbeats on an instant relay whose tournament credits its prizes: the winner can withdraw them', async () => {
    const catalog = join(mkdtempSync(join(tmpdir(), 'rewardbus-client-cup-')), 'catalog.json');
    writeFileSync(
      catalog,
      JSON.stringify([
        { id: 'first-coin', title: 'First coin', sats: 21, repeat: { kind: 'once' } },
        { id: 'season', kind: 'tournament', title: 'Season', prizes: [400], payout: 'balance' },
      ]),
    );
    await start({ RELAY_CATALOG: catalog, RELAY_GAME_SERVER_SECRET: 'game-server-secret-0123456789abcdefghij' });
    const net = recordingFetch();
    const b = bus({ fetch: net.fetch });
    await b.link('ada');
    // Witnessed play is what an allowance grows by: without heartbeats the prize could never be withdrawn under one.
    await expect.poll(() => net.seen.filter((l) => l === 'POST /v1/play')).toHaveLength(1);
  });

  it('sends a heartbeat every 20 s in balance mode while the bus lives, and none after destroy()', async () => {
    await start(balanceMode);
    const net = recordingFetch();
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const b = bus({ fetch: net.fetch });
    await b.link('ada');
    const beats = () => net.seen.filter((l) => l === 'POST /v1/play').length;
    await expect.poll(beats).toBe(1);
    await vi.advanceTimersByTimeAsync(20_000);
    await expect.poll(beats).toBe(2);
    await vi.advanceTimersByTimeAsync(40_000);
    await expect.poll(beats).toBe(4);
    b.destroy();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(beats()).toBe(4);
  });

  it('renews a lapsed token for the heartbeat, which the relay takes again: witnessed play goes on counting', async () => {
    await start(balanceMode);
    const { fetch, answers } = playAndLinkAnswers();
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'], shouldAdvanceTime: true });
    const b = bus({ fetch });
    await b.link('ada');
    await expect.poll(() => answers).toEqual(['/v1/players 201', '/v1/play 200']);
    // Two days on, the token (a day's life) has lapsed: the next beat is refused, the token renewed, the beat taken.
    vi.setSystemTime(Date.now() + 2 * 86_400_000);
    await vi.advanceTimersByTimeAsync(20_000);
    await expect.poll(() => answers.slice(2)).toEqual(['/v1/play 401', '/v1/players 201', '/v1/play 200']);
    b.destroy();
  });
});
