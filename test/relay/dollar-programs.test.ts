// Every amount in the catalog in dollars (issue 38), over real HTTP with the sandbox as the payments
// service (its POST /_sandbox/btcusd control sets the price), on SQLite and PostgreSQL: a login
// streak's step, a tournament's prizes (priced when the results are posted; a stale price refuses
// the post and records nothing; the same results again need no price), a referral program's two
// rewards (priced when the referral qualifies). A streak's days at two prices: ledger-streak-contract.ts.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { CatalogItem } from '../../src/relay/core/catalog.js';
import type { CatalogResponse, PlayerSession, RewardRecord, TournamentPosted } from '../../src/wire/relay-api.js';
import { relayBackends } from '../helpers/backends.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const postgresUrl = inject('postgresUrl');
const dir = mkdtempSync(join(tmpdir(), 'rewardbus-dollar-programs-'));
const SERVER_SECRET = `server-${randomUUID()}`;
const ADMIN = `admin-${randomUUID()}`;

const ENTRIES: CatalogItem[] = [
  { id: 'coin', title: 'Coin', sats: 10, repeat: { kind: 'cooldown', seconds: 0 } },
  // Day 1 $0.05, day 2 20 sats, day 3 on $0.10.
  { id: 'login', title: 'Login streak', repeat: { kind: 'streak', sats: [{ usd: 0.05 }, 20, { usd: 0.1 }] } } as CatalogItem,
  { id: 'cup', kind: 'tournament', title: 'Cup', prizes: [{ usd: 10 }, 5_000, { usd: 1 }] },
  { id: 'invite', kind: 'referral', title: 'Invite a friend', referrerUsd: 0.1, refereeUsd: 0.05, afterPlaySeconds: 0 },
];
const CATALOG = join(dir, 'catalog.json');
writeFileSync(CATALOG, JSON.stringify({ achievements: ENTRIES }));
// A tournament in sats only, for a budget in dollars.
const PLATE_CATALOG = join(dir, 'catalog-plate.json');
writeFileSync(PLATE_CATALOG, JSON.stringify({ achievements: [...ENTRIES, { id: 'plate', kind: 'tournament', title: 'Plate', prizes: [5_000, 1_000] }] }));

/** Dollars in sats at a price, as core/price.ts rounds them (to the nearest sat). */
const sats = (usd: number, btcUsd: number) => Math.round((usd * 1e8) / btcUsd);

const relays: TestRelay[] = [];
afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

const control = (relay: TestRelay, body: object) =>
  fetch(`${relay.url}/sandbox/_sandbox/btcusd`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const catalog = async (relay: TestRelay) => (await (await fetch(`${relay.url}/v1/catalog`)).json()) as CatalogResponse;
/** Sets the sandbox's price and waits until the relay's catalog shows it (a positive signal, no sleep). */
async function setPrice(relay: TestRelay, btcUsd: number) {
  expect((await control(relay, { usd: btcUsd })).status).toBe(200);
  await expect.poll(async () => (await catalog(relay)).achievements.find((a) => a.id === 'login')?.sats, { timeout: 15_000 }).toBe(sats(0.05, btcUsd));
}

type Posted = { status: number; headers: Headers; body: TournamentPosted & { code?: string } };
async function post(relay: TestRelay, period: string, ranking: string[], tournament = 'cup'): Promise<Posted> {
  const r = await fetch(`${relay.url}/v1/server/tournaments/${tournament}/results`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${SERVER_SECRET}` },
    body: JSON.stringify({ period, ranking }),
  });
  return { status: r.status, headers: r.headers, body: (await r.json()) as Posted['body'] };
}
const history = async (relay: TestRelay, token: string) =>
  ((await (await fetch(`${relay.url}/v1/rewards`, { headers: { authorization: `Bearer ${token}` } })).json()) as { rewards: RewardRecord[] }).rewards;

/** A link from an address of its own (through the trusted proxy), so a referee is no self-referral. */
async function link(relay: TestRelay, gamertag: string, address: string, referralCode?: string): Promise<PlayerSession> {
  const r = await fetch(`${relay.url}/v1/players`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
    body: JSON.stringify({ gamertag, ...(referralCode !== undefined ? { referralCode } : {}) }),
  });
  expect(r.status).toBe(201);
  return (await r.json()) as PlayerSession;
}

describe.each(relayBackends(postgresUrl))('programs priced in dollars on $name', (backend) => {
  async function start(env: Record<string, string> = {}, dataDir?: string) {
    const relay = await startTestRelay(
      {
        RELAY_CATALOG: CATALOG,
        RELAY_GAME_SERVER_SECRET: SERVER_SECRET,
        RELAY_PRICE_TTL_SECONDS: '1',
        RELAY_TRUST_PROXY: '127.0.0.1',
        RELAY_LINKS_PER_ADDRESS_PER_DAY: '0',
        RELAY_ADDRESS_DAILY_CAP_SATS: '0',
        RELAY_USER_DAILY_CAP_SATS: '100000',
        RELAY_DAILY_BUDGET_SATS: '1000000',
        RELAY_ADMIN_TOKEN: ADMIN,
        ...env,
      },
      {},
      dataDir,
    );
    relays.push(relay);
    return relay;
  }

  it("shows a streak's steps and a tournament's prizes in sats at the price beside their usd, and pays a dollar step at it", async () => {
    const relay = await start(await backend.env());
    await setPrice(relay, 65_000);
    const shown = await catalog(relay);
    expect(shown.achievements.find((a) => a.id === 'login')).toMatchObject({
      sats: 77,
      usd: 0.05,
      repeat: { kind: 'streak', sats: [77, 20, 154], usd: [0.05, null, 0.1] },
    });
    // An entry with no dollars keeps its shape.
    expect(shown.achievements.find((a) => a.id === 'coin')).toEqual({ id: 'coin', title: 'Coin', sats: 10, repeat: { kind: 'cooldown', seconds: 0 } });
    expect(shown.tournaments).toEqual([{ id: 'cup', kind: 'tournament', title: 'Cup', prizes: [15_385, 5_000, 1_538], prizesUsd: [10, null, 1] }]);

    const ada = await link(relay, 'ada', '203.0.113.1');
    const day1 = await relay.claim(ada.token, { achievementId: 'login' });
    expect(day1.status).toBe(201);
    expect(day1.body).toMatchObject({ status: 'paid', sats: 77, usd: 0.05, btcUsd: 65_000, streakDay: 1 });
    expect(relay.sandbox!.payments().map((p) => Number(p.amount) / 1000)).toEqual([77]);
  });

  it('posts dollar prizes at the post’s price (usd, btcUsd on each); a stale price refuses a new post with 503 and records nothing; the same results again: 200', async () => {
    const relay = await start({ ...(await backend.env()), RELAY_PRICE_MAX_AGE_SECONDS: '2' });
    const [a, b, c] = [await relay.link('racer-1'), await relay.link('racer-2'), await relay.link('racer-3')];
    await setPrice(relay, 65_000);
    const ranking = [b.userId, a.userId, c.userId];
    const first = await post(relay, '2026-W48', ranking);
    expect(first.status).toBe(201);
    expect(first.body.rewards.map((r) => [r.userId, r.sats, r.usd, r.btcUsd, r.place])).toEqual([
      [b.userId, sats(10, 65_000), 10, 65_000, 1],
      [a.userId, 5_000, 3.25, 65_000, 2],
      [c.userId, sats(1, 65_000), 1, 65_000, 3],
    ]);
    await expect.poll(() => relay.sandbox!.payments().length).toBe(3);

    // The service stops answering the price: once it is older than 2 s, a streak's dollar day is refused…
    expect((await control(relay, { fail: 503 })).status).toBe(200);
    await expect.poll(async () => (await relay.claim(a.token, { achievementId: 'login' })).status, { timeout: 15_000 }).toBe(503);
    // …and so is a new post of dollar prizes: nothing recorded, nothing paid.
    const paid = relay.sandbox!.payments().length;
    const refused = await post(relay, '2026-W49', ranking);
    expect([refused.status, refused.body.code, refused.headers.get('content-type')]).toEqual([503, 'price_unavailable', 'application/problem+json']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    for (const p of [a, b, c]) expect((await history(relay, p.token)).filter((r) => r.period === '2026-W49')).toEqual([]);
    expect(relay.sandbox!.payments().length).toBe(paid);
    // The results already posted answer as decided: no price needed.
    const again = await post(relay, '2026-W48', ranking);
    expect(again.status).toBe(200);
    expect(again.body.rewards.map((r) => [r.id, r.sats, r.btcUsd])).toEqual(first.body.rewards.map((r) => [r.id, r.sats, r.btcUsd]));

    // The price back at another level: the new period is priced at it.
    expect((await control(relay, { fail: false, usd: 50_000 })).status).toBe(200);
    await expect.poll(async () => (await post(relay, '2026-W49', ranking)).status, { timeout: 15_000 }).toBe(201);
    const w49 = (await history(relay, b.token)).find((r) => r.period === '2026-W49');
    expect(w49).toMatchObject({ sats: sats(10, 50_000), usd: 10, btcUsd: 50_000, place: 1 });
  });

  it('counts a pool of sats prizes in dollars under RELAY_DAILY_BUDGET_USD: valued at the price, a pool past the dollar budget records nothing (409)', async () => {
    const relay = await start({ ...(await backend.env()), RELAY_CATALOG: PLATE_CATALOG, RELAY_DAILY_BUDGET_SATS: '', RELAY_DAILY_BUDGET_USD: '5' });
    const [a, b] = [await relay.link('racer-1'), await relay.link('racer-2')];
    await setPrice(relay, 50_000);
    // 5,000 and 1,000 sats at $50,000 a bitcoin: $2.50 and $0.50, $3 of the day's $5.
    const first = await post(relay, '2026-W48', [a.userId, b.userId], 'plate');
    expect(first.status).toBe(201);
    expect(first.body.rewards.map((r) => [r.sats, r.usd, r.btcUsd])).toEqual([
      [5_000, 2.5, 50_000],
      [1_000, 0.5, 50_000],
    ]);
    await expect.poll(() => relay.sandbox!.payments().length).toBe(2);
    // Another $3 would pass the $5: refused whole, nothing recorded or paid.
    const over = await post(relay, '2026-W49', [b.userId, a.userId], 'plate');
    expect([over.status, over.body.code]).toEqual([409, 'daily_budget']);
    for (const p of [a, b]) expect((await history(relay, p.token)).filter((r) => r.period === '2026-W49')).toEqual([]);
    expect(relay.sandbox!.payments()).toHaveLength(2);
    // A claim's value still fits what the pool left: 10 sats, $0.005.
    expect((await relay.claim(a.token, { achievementId: 'coin' })).body).toMatchObject({ status: 'paid', usd: 0.005 });
  });

  it('pays both rewards of a referral program in dollars at the price when it qualifies', async () => {
    const relay = await start(await backend.env());
    await setPrice(relay, 40_000);
    const alice = await link(relay, 'alice', '198.51.100.1');
    const code = ((await (await fetch(`${relay.url}/v1/referral-code`, { headers: { authorization: `Bearer ${alice.token}` } })).json()) as { code: string }).code;
    const bob = await link(relay, 'bob', '203.0.113.5', code);
    expect(bob.referral).toBe('pending');
    expect((await relay.claim(bob.token, { achievementId: 'coin' })).body.status).toBe('paid');
    const rewards = async (p: PlayerSession) => (await history(relay, p.token)).filter((r) => r.referral !== undefined).map((r) => [r.referral, r.status, r.sats, r.usd, r.btcUsd]);
    await expect.poll(() => rewards(bob)).toEqual([['referee', 'paid', sats(0.05, 40_000), 0.05, 40_000]]);
    await expect.poll(() => rewards(alice)).toEqual([['referrer', 'paid', sats(0.1, 40_000), 0.1, 40_000]]);
  });

  it('keeps a referral that qualifies while no price is young enough: qualified, its rewards made by the sweep at the price then', async () => {
    const env = { ...(await backend.env()), RELAY_PRICE_MAX_AGE_SECONDS: '2' };
    const first = await start(env);
    await setPrice(first, 40_000);
    const alice = await link(first, 'alice', '198.51.100.1');
    const code = ((await (await fetch(`${first.url}/v1/referral-code`, { headers: { authorization: `Bearer ${alice.token}` } })).json()) as { code: string }).code;
    const bob = await link(first, 'bob', '203.0.113.5', code);
    // The price goes stale (a dollar streak day is refused: the positive signal), then Bob is paid.
    expect((await control(first, { fail: 503 })).status).toBe(200);
    const probe = await link(first, 'probe', '203.0.113.9');
    await expect.poll(async () => (await first.claim(probe.token, { achievementId: 'login' })).status, { timeout: 15_000 }).toBe(503);
    expect((await first.claim(bob.token, { achievementId: 'coin' })).body.status).toBe('paid');
    const referrals = async (relay: TestRelay) =>
      ((await (await fetch(`${relay.url}/admin/api/referrals`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as { referrals: Array<{ state: string }> }).referrals;
    await expect.poll(async () => (await referrals(first)).map((r) => r.state)).toEqual(['qualified']);
    expect((await history(first, bob.token)).filter((r) => r.referral !== undefined)).toEqual([]);
    relays.splice(relays.indexOf(first), 1);
    await first.close({ graceMs: 0 });

    // A relay starts again (its sandbox answers the price): its sweep at start makes both rewards at that price.
    const again = await start(env, first.dataDir);
    await expect
      .poll(async () => (await history(again, bob.token)).filter((r) => r.referral !== undefined).map((r) => [r.referral, r.status, r.usd]), { timeout: 15_000 })
      .toEqual([['referee', 'paid', 0.05]]);
    // The referrer's reward is made in the same sweep but paid on its own: wait for its answer too.
    await expect.poll(async () => (await history(again, alice.token)).find((r) => r.referral === 'referrer')?.status, { timeout: 15_000 }).toBe('paid');
    const made = (await history(again, alice.token)).find((r) => r.referral === 'referrer');
    expect(made).toMatchObject({ status: 'paid', usd: 0.1 });
    expect(made!.sats).toBe(sats(0.1, made!.btcUsd!));
  });
});
