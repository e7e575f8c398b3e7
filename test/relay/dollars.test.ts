// Rewards priced in dollars (issue 38), over real HTTP with the sandbox as the payments service, on
// SQLite and PostgreSQL: the sats are decided at the BTC/USD price when a claim is decided and
// recorded with it; a decided claim keeps them whatever the price does next; a price too old
// refuses dollar-priced claims only; a dollar budget and cap buy the same number of $0.05 rewards
// at any price, however many claims come at once.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Achievement } from '../../src/relay/core/catalog.js';
import type { CatalogResponse } from '../../src/wire/relay-api.js';
import { relayBackends } from '../helpers/backends.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const postgresUrl = inject('postgresUrl');
const dir = mkdtempSync(join(tmpdir(), 'rewardbus-dollars-'));

const ACHIEVEMENTS: Achievement[] = [
  { id: 'gem', title: 'Gem', usd: 0.05, repeat: { kind: 'cooldown', seconds: 0 } },
  { id: 'trophy', title: 'Trophy', usd: 0.05, repeat: { kind: 'cooldown', seconds: 0 }, hold: true },
  { id: 'coin', title: 'Coin', sats: 10, repeat: { kind: 'cooldown', seconds: 0 } },
];
const CATALOG = join(dir, 'catalog.json');
writeFileSync(CATALOG, JSON.stringify({ achievements: ACHIEVEMENTS }));
const BACKENDS = relayBackends(postgresUrl);

/** $0.05 in sats at a price, as core/price.ts rounds it (to the nearest sat). */
const sats = (btcUsd: number) => Math.round((0.05 * 1e8) / btcUsd);

const relays: TestRelay[] = [];
afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});
async function start(env: Record<string, string>) {
  // The price read every second, so a price set by the sandbox's control is in force at once.
  // No sats limits (a dollar one set in place of its sats one turns that off itself).
  const relay = await startTestRelay({
    RELAY_CATALOG: CATALOG,
    RELAY_PRICE_TTL_SECONDS: '1',
    ...(env.RELAY_USER_DAILY_CAP_USD ? {} : { RELAY_USER_DAILY_CAP_SATS: '0' }),
    ...(env.RELAY_DAILY_BUDGET_USD ? {} : { RELAY_DAILY_BUDGET_SATS: '0' }),
    ...env,
  });
  relays.push(relay);
  return relay;
}

const control = (relay: TestRelay, body: object) =>
  fetch(`${relay.url}/sandbox/_sandbox/btcusd`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const catalog = async (relay: TestRelay) => (await (await fetch(`${relay.url}/v1/catalog`)).json()) as CatalogResponse;
/** Sets the sandbox's price and waits until the relay's catalog shows it (a positive signal, no sleep). */
async function setPrice(relay: TestRelay, btcUsd: number) {
  expect((await control(relay, { usd: btcUsd })).status).toBe(200);
  await expect.poll(async () => (await catalog(relay)).achievements.find((a) => a.id === 'gem')?.sats, { timeout: 15_000 }).toBe(sats(btcUsd));
}
const admin = (relay: TestRelay, path: string, method = 'GET') =>
  fetch(`${relay.url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${relay.adminToken}`, 'x-operator': 'ops-ann' } });
const paidSats = (relay: TestRelay) => relay.sandbox!.payments().map((p) => Number(p.amount) / 1000);

describe.each(BACKENDS)('rewards priced in dollars on $name', (backend) => {
  it('pays the right sats at two prices, records the price used, and shows both in the catalog', async () => {
    const relay = await start(await backend.env());
    const player = await relay.link('ada');
    await setPrice(relay, 65_000);
    const first = await relay.claim(player.token, { achievementId: 'gem' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ status: 'paid', sats: 77, usd: 0.05, btcUsd: 65_000 });
    await setPrice(relay, 50_000);
    const second = await relay.claim(player.token, { achievementId: 'gem' });
    expect(second.body).toMatchObject({ status: 'paid', sats: 100, usd: 0.05, btcUsd: 50_000 });
    // A sats-priced achievement is as it was: no price on its record.
    const coin = await relay.claim(player.token, { achievementId: 'coin' });
    expect(coin.body).toMatchObject({ status: 'paid', sats: 10 });
    expect(coin.body).not.toHaveProperty('btcUsd');
    expect(paidSats(relay)).toEqual([77, 100, 10]);
    expect((await catalog(relay)).achievements).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 'gem', sats: 100, usd: 0.05 }), expect.objectContaining({ id: 'coin', sats: 10 })]),
    );
    // The operator sees the price in force, its age, and the day's spend in both units.
    const summary = (await (await admin(relay, '/summary')).json()) as { today: { budget: { used: number } }; dollars: Record<string, unknown> };
    expect(summary.today.budget.used).toBe(187);
    expect(summary.dollars).toMatchObject({ btcUsd: 50_000, usedUsd: 0.1, budgetUsd: null });
    expect(summary.dollars.priceAgeSeconds).toEqual(expect.any(Number));
    const metrics = await (await fetch(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${relay.adminToken}` } })).text();
    expect(metrics).toMatch(/^rewardbus_btc_usd 50000$/m);
    expect(metrics).toMatch(/^rewardbus_btc_usd_age_seconds \d/m);
    expect(metrics).toMatch(/^rewardbus_budget_used_usd 0\.1$/m);
    expect(metrics).toMatch(/^rewardbus_budget_used_sats 187$/m);
    // The history keeps each claim's own price.
    const history = (await (await fetch(`${relay.url}/v1/rewards`, { headers: { authorization: `Bearer ${player.token}` } })).json()) as {
      rewards: Array<{ sats: number; btcUsd?: number }>;
    };
    expect(history.rewards.map((r) => [r.sats, r.btcUsd])).toEqual([
      [10, undefined],
      [100, 50_000],
      [77, 65_000],
    ]);
  });

  it('a claim decided before a price change keeps its sats: held at one price, approved at another', async () => {
    const relay = await start(await backend.env());
    const player = await relay.link('ada');
    await setPrice(relay, 65_000);
    const held = await relay.claim(player.token, { achievementId: 'trophy' });
    expect(held.body).toMatchObject({ status: 'held', sats: 77, usd: 0.05, btcUsd: 65_000 });
    await setPrice(relay, 100_000);
    const approved = await admin(relay, `/review/${held.body.id}/approve`, 'POST');
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({ entry: { state: 'paid', sats: 77 } });
    expect(paidSats(relay)).toEqual([77]);
    const record = (await (await fetch(`${relay.url}/v1/rewards/${held.body.id}`, { headers: { authorization: `Bearer ${player.token}` } })).json()) as object;
    expect(record).toMatchObject({ status: 'paid', sats: 77, usd: 0.05, btcUsd: 65_000 });
  });

  it('a price older than RELAY_PRICE_MAX_AGE_SECONDS refuses dollar-priced claims (503 price_unavailable, Retry-After); sats claims are paid', async () => {
    const relay = await start({ ...(await backend.env()), RELAY_PRICE_MAX_AGE_SECONDS: '2' });
    const player = await relay.link('ada');
    await setPrice(relay, 65_000);
    const before = await relay.claim(player.token, { achievementId: 'gem' });
    expect(before.body.status).toBe('paid');
    expect((await control(relay, { fail: 503 })).status).toBe(200);
    // Paid while the price is young enough; refused once it is older than 2 s.
    await expect.poll(async () => (await relay.claim(player.token, { achievementId: 'gem' })).status, { timeout: 15_000 }).toBe(503);
    const refused = await relay.claim(player.token, { achievementId: 'gem' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body).toMatchObject({ code: 'price_unavailable', status: 503 });
    const payments = relay.sandbox!.payments().length;
    expect((await relay.claim(player.token, { achievementId: 'coin' })).body).toMatchObject({ status: 'paid', sats: 10 });
    expect(relay.sandbox!.payments().length).toBe(payments + 1);
    // A key already decided is answered as it stands: it needs no price.
    const replay = await relay.claim(player.token, { achievementId: 'gem' }, before.body.idempotencyKey);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    // The price back: dollar claims are paid again.
    expect((await control(relay, { fail: false, usd: 80_000 })).status).toBe(200);
    await expect.poll(async () => (await relay.claim(player.token, { achievementId: 'gem' })).body.sats, { timeout: 15_000 }).toBe(sats(80_000));
  });

  it('RELAY_DAILY_BUDGET_USD=0.25 buys exactly five $0.05 rewards across two prices, however many claims come at once', async () => {
    const relay = await start({ ...(await backend.env()), RELAY_DAILY_BUDGET_USD: '0.25' });
    const players = await Promise.all(['ada', 'bob', 'cy', 'di', 'ed', 'flo'].map((g) => relay.link(g)));
    await setPrice(relay, 65_000);
    for (const p of players.slice(0, 2)) expect((await relay.claim(p.token, { achievementId: 'gem' })).body.status).toBe('paid');
    await setPrice(relay, 30_000);
    // Twelve claims at once, from six players: three fit.
    const rush = await Promise.all(players.flatMap((p) => [relay.claim(p.token, { achievementId: 'gem' }), relay.claim(p.token, { achievementId: 'gem' })]));
    const outcomes = rush.map((r) => (r.body.reason ? `${r.body.status} ${r.body.reason}` : r.body.status)).sort();
    expect(outcomes).toEqual([...Array(3).fill('paid'), ...Array(9).fill('rejected daily_budget')]);
    expect(paidSats(relay).sort((a, b) => a - b)).toEqual([77, 77, 167, 167, 167].sort((a, b) => a - b));
    // A sats-priced claim counts its value at the price too: the budget has no room for it either.
    expect((await relay.claim(players[0]!.token, { achievementId: 'coin' })).body).toMatchObject({ status: 'rejected', reason: 'daily_budget' });
  });

  it('RELAY_USER_DAILY_CAP_USD=0.10 holds at the edge at two prices, for each player, under concurrent claims', async () => {
    const relay = await start({ ...(await backend.env()), RELAY_USER_DAILY_CAP_USD: '0.10' });
    const [ada, bob] = await Promise.all([relay.link('ada'), relay.link('bob')]);
    await setPrice(relay, 65_000);
    expect((await relay.claim(ada.token, { achievementId: 'gem' })).body.status).toBe('paid');
    await setPrice(relay, 40_000);
    const rush = await Promise.all([ada, ada, ada, ada, bob, bob, bob, bob].map((p) => relay.claim(p.token, { achievementId: 'gem' })));
    const byPlayer = (token: string) =>
      rush
        .filter((_, i) => (i < 4 ? ada : bob).token === token)
        .map((r) => (r.body.reason ? `${r.body.status} ${r.body.reason}` : r.body.status))
        .sort();
    expect(byPlayer(ada.token)).toEqual(['paid', ...Array(3).fill('rejected user_daily_cap')]);
    expect(byPlayer(bob.token)).toEqual(['paid', 'paid', ...Array(2).fill('rejected user_daily_cap')]);
    expect(paidSats(relay).sort((a, b) => a - b)).toEqual([77, 125, 125, 125].sort((a, b) => a - b));
  });
});
