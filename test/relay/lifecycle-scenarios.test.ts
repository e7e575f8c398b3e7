// One reward lifecycle, decided once: the scenarios an attacker ran against both ledgers, over
// real HTTP with the sandbox as the payments service. Each pays by the rules in force when the
// claim is decided, never below zero, identically on SQLite and PostgreSQL, and never answers 500.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import type { CatalogEntry } from '../../src/relay/index.js';
import { TEST_GAMERTAGS } from '../../src/sandbox/index.js';
import { relayBackends } from '../helpers/backends.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const postgresUrl = inject('postgresUrl');
const dir = mkdtempSync(join(tmpdir(), 'rewardbus-lifecycle-'));
const DAY = 86_400_000;

/** A catalog with one achievement, `bigcoin`, at a price. */
const catalog = (sats: number, over: Partial<CatalogEntry> = {}) => {
  const path = join(dir, `${randomUUID()}.json`);
  const entry: CatalogEntry = { id: 'bigcoin', title: 'Big coin', sats, repeat: { kind: 'cooldown', seconds: 0 }, ...over };
  writeFileSync(path, JSON.stringify({ achievements: [entry] }));
  return path;
};

const BACKENDS = relayBackends(postgresUrl);

const relays: TestRelay[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

/** A relay on `dataDir` (a restart when it is the last one's), with `env`. */
async function start(env: Record<string, string>, dataDir?: string) {
  const relay = await startTestRelay(env, {}, dataDir);
  relays.push(relay);
  return relay;
}
/** Stops a relay, keeping its data for the next one. */
async function restart(relay: TestRelay, env: Record<string, string>) {
  relays.splice(relays.indexOf(relay), 1);
  await relay.close({ graceMs: 0 });
  return start(env, relay.dataDir);
}

const paidSats = (relay: TestRelay) => relay.sandbox!.payments().reduce((sum, p) => sum + Number(p.amount) / 1000, 0);
const admin = async (relay: TestRelay, path: string, method = 'GET') => {
  const r = await fetch(`${relay.url}/admin/api${path}`, { method, headers: { authorization: `Bearer ${relay.adminToken}`, 'x-operator': 'ops-ann' } });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> & { today: { budget: { used: number } }; code?: string } };
};
const budgetUsed = async (relay: TestRelay) => (await admin(relay, '/summary')).body.today.budget.used;

describe.each(BACKENDS)('one reward lifecycle on $name', (backend) => {
  it("a claim banked before its play time is paid at today's price: caps, budget and hold at the new price, never the first try's", async () => {
    const base = { ...(await backend.env()), RELAY_HOLD_ABOVE_SATS: '500', RELAY_USER_DAILY_CAP_SATS: '1000', RELAY_DAILY_BUDGET_SATS: '5000' };
    let relay = await start({ ...base, RELAY_CATALOG: catalog(1000, { minPlaySeconds: 3 }) });
    const player = await relay.link('ada');
    const keys = Array.from({ length: 20 }, () => randomUUID());
    const early = await Promise.all(keys.map((k) => relay.claim(player.token, { achievementId: 'bigcoin' }, k)));
    expect(early.map((r) => r.status)).toEqual(Array(20).fill(425));
    // Seeing abuse, the operator lowers the price to 10 sats and restarts; the bot re-sends its keys when due.
    relay = await restart(relay, { ...base, RELAY_CATALOG: catalog(10, { minPlaySeconds: 3 }) });
    await vi.waitFor(async () => expect((await relay.claim(player.token, { achievementId: 'bigcoin' }, keys[0])).status).toBe(201), { timeout: 10_000, interval: 250 });
    const again = await Promise.all(keys.slice(1).map((k) => relay.claim(player.token, { achievementId: 'bigcoin' }, k)));
    expect(again.map((r) => r.status)).toEqual(Array(19).fill(201));
    expect(new Set(again.map((r) => `${r.body.status} ${r.body.sats}`))).toEqual(new Set(['paid 10']));
    // 20 × 10, inside the 1,000-sat cap: none held, and the page counts what left the wallet.
    expect(paidSats(relay)).toBe(200);
    expect(await budgetUsed(relay)).toBe(200);
  });

  it('a repriced payment that fails frees exactly what it reserved: the budget never goes below zero', async () => {
    const base = { ...(await backend.env()), RELAY_USER_DAILY_CAP_SATS: '0', RELAY_DAILY_BUDGET_SATS: '500' };
    let relay = await start({ ...base, RELAY_CATALOG: catalog(1000, { minPlaySeconds: 2 }) });
    const broke = await relay.link(TEST_GAMERTAGS.refused);
    const honest = await relay.link('grace');
    const keys = Array.from({ length: 5 }, () => randomUUID());
    for (const k of keys) expect((await relay.claim(broke.token, { achievementId: 'bigcoin' }, k)).status).toBe(425);
    relay = await restart(relay, { ...base, RELAY_CATALOG: catalog(10, { minPlaySeconds: 2 }) });
    await vi.waitFor(async () => expect((await relay.claim(broke.token, { achievementId: 'bigcoin' }, keys[0])).body.status).toBe('failed'), { timeout: 10_000, interval: 250 });
    for (const k of keys.slice(1)) expect((await relay.claim(broke.token, { achievementId: 'bigcoin' }, k)).body).toMatchObject({ status: 'failed', sats: 10 });
    expect(await budgetUsed(relay)).toBe(0);
    // The budget is whole: 50 claims of 10 fit in it, and the 51st does not.
    const paid = [];
    for (let i = 0; i < 51; i++) paid.push((await relay.claim(honest.token, { achievementId: 'bigcoin' })).body);
    expect(paid.filter((r) => r.status === 'paid')).toHaveLength(50);
    expect(paid[50]).toMatchObject({ status: 'rejected', reason: 'daily_budget' });
    expect(paidSats(relay)).toBe(500);
  });

  it("a held claim approved on a later UTC day is checked against that day's budget (409 daily_budget, still held) and counts there", async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    const base = await backend.env();
    let relay = await start({ ...base, RELAY_CATALOG: catalog(600, { hold: true }), RELAY_DAILY_BUDGET_SATS: '1000' });
    const player = await relay.link('ada');
    const held = await relay.claim(player.token, { achievementId: 'bigcoin' });
    expect(held.body).toMatchObject({ status: 'held', sats: 600 });
    expect(await budgetUsed(relay)).toBe(600);
    // The next day, with a budget of 500: no room for 600 today. It stays held; nothing is paid.
    vi.setSystemTime(Date.now() + DAY);
    relay = await restart(relay, { ...base, RELAY_CATALOG: catalog(600, { hold: true }), RELAY_DAILY_BUDGET_SATS: '500' });
    const refused = await admin(relay, `/review/${held.body.id}/approve`, 'POST');
    expect(refused).toMatchObject({ status: 409, body: { code: 'daily_budget' } });
    expect((await admin(relay, '/held')).body.entries).toMatchObject([{ id: held.body.id }]);
    expect(paidSats(relay)).toBe(0);
    // With room again, approved: paid, and counted on the day it left the wallet.
    relay = await restart(relay, { ...base, RELAY_CATALOG: catalog(600, { hold: true }), RELAY_DAILY_BUDGET_SATS: '1000' });
    const approved = await admin(relay, `/review/${held.body.id}/approve`, 'POST');
    expect(approved).toMatchObject({ status: 200, body: { settled: true, entry: { state: 'paid' } } });
    expect(paidSats(relay)).toBe(600);
    expect(await budgetUsed(relay)).toBe(600);
  });
});
