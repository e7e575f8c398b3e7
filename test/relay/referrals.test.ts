// Referral programs (issue 37) over real HTTP, on SQLite and PostgreSQL, the sandbox paying:
// every answer a link gets, qualification (after the play time, by the named achievement), both
// rewards once, the referrer's daily cap, the referral farm, and a qualification a crash lost.
// Addresses are faked through a trusted proxy on loopback (X-Forwarded-For), as in bot-farm.test.ts.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { CatalogItem } from '../../src/relay/core/catalog.js';
import type { PlayerSession, RewardRecord } from '../../src/wire/relay-api.js';
import { type Backend, relayBackends } from '../helpers/backends.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';
import { readSse } from '../helpers/sse.js';

const postgresUrl = inject('postgresUrl');
const ADMIN = `admin-${randomUUID()}`;
const dir = mkdtempSync(join(tmpdir(), 'rewardbus-referrals-'));
const catalogFile = (entries: CatalogItem[]) => {
  const path = join(dir, `${randomUUID()}.json`);
  writeFileSync(path, JSON.stringify({ achievements: entries }));
  return path;
};
const COIN: CatalogItem = { id: 'coin', title: 'Coin', sats: 10, repeat: { kind: 'cooldown', seconds: 0 } };
const LEVEL: CatalogItem = { id: 'level', title: 'Level', sats: 20, repeat: { kind: 'once' } };
const invite = (more: Partial<Extract<CatalogItem, { kind: 'referral' }>> = {}): CatalogItem => ({
  id: 'invite',
  kind: 'referral',
  title: 'Invite a friend',
  referrerSats: 100,
  refereeSats: 50,
  afterPlaySeconds: 0,
  ...more,
});

type Referral = { programId: string; refereeId: string; referrerId?: string; state: string; reason?: string; referrerCapped?: boolean };
type AdminEntry = { userId: string; achievementId: string; sats: number; state: string; reason: string | null };

const relays: TestRelay[] = [];
afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

/** No caps in the way unless a test says so: what is asserted is the referral rules. */
const OPEN_LIMITS = {
  RELAY_TRUST_PROXY: '127.0.0.1',
  RELAY_ADMIN_TOKEN: ADMIN,
  RELAY_LINKS_PER_ADDRESS_PER_DAY: '0',
  RELAY_ADDRESS_DAILY_CAP_SATS: '0',
  RELAY_USER_DAILY_CAP_SATS: '100000',
  RELAY_DAILY_BUDGET_SATS: '1000000',
};

async function start(env: Record<string, string>, dataDir?: string) {
  const relay = await startTestRelay({ ...OPEN_LIMITS, ...env }, {}, dataDir);
  relays.push(relay);
  return relay;
}

const from = (address: string) => ({ 'x-forwarded-for': address });

async function link(relay: TestRelay, gamertag: string, address: string, referralCode?: string): Promise<PlayerSession> {
  const r = await fetch(`${relay.url}/v1/players`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...from(address) },
    body: JSON.stringify({ gamertag, ...(referralCode !== undefined ? { referralCode } : {}) }),
  });
  expect(r.status).toBe(201);
  return (await r.json()) as PlayerSession;
}

async function codeOf(relay: TestRelay, token: string): Promise<string> {
  const r = await fetch(`${relay.url}/v1/referral-code`, { headers: { authorization: `Bearer ${token}` } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { code: string }).code;
}

async function claim(relay: TestRelay, token: string, achievementId: string, address: string) {
  const r = await fetch(`${relay.url}/v1/rewards`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), ...from(address) },
    body: JSON.stringify({ achievementId }),
  });
  return { status: r.status, body: (await r.json()) as RewardRecord & { code?: string } };
}

const history = async (relay: TestRelay, token: string) =>
  ((await (await fetch(`${relay.url}/v1/rewards`, { headers: { authorization: `Bearer ${token}` } })).json()) as { rewards: RewardRecord[] }).rewards;
const admin = async <T>(relay: TestRelay, path: string): Promise<T> =>
  (await (await fetch(`${relay.url}/admin/api${path}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as T;
const referrals = async (relay: TestRelay) => (await admin<{ referrals: Referral[] }>(relay, '/referrals')).referrals;
const programEntries = async (relay: TestRelay, programId = 'invite') => (await admin<{ entries: AdminEntry[] }>(relay, `/recent?achievement=${programId}`)).entries;
const referralRewards = async (relay: TestRelay, token: string) => (await history(relay, token)).filter((r) => r.referral !== undefined);

describe.each(relayBackends(postgresUrl))('referrals on $name', (backend: Backend) => {
  it('answers each link: pending, not_new, unknown_code, self_referral by userId, by address and by /64', async () => {
    const relay = await start({ ...(await backend.env()), RELAY_CATALOG: catalogFile([COIN, LEVEL, invite()]) });
    const alice = await link(relay, 'alice', '198.51.100.1');
    const code = await codeOf(relay, alice.token);
    expect(code).toMatch(/^[0-9a-z]{10}$/);
    expect(await codeOf(relay, alice.token)).toBe(code);
    // Alice claims from an IPv6 address too: its whole /64 is hers.
    expect((await claim(relay, alice.token, 'coin', '2001:db8:1:2::a')).body.status).toBe('paid');

    expect((await link(relay, 'bob', '203.0.113.5', code)).referral).toBe('pending');
    expect((await link(relay, 'bob', '203.0.113.5', code)).referral).toBe('not_new');
    expect((await link(relay, 'carol', '203.0.113.6', 'zzzzzzzzzz')).referral).toBe('unknown_code');
    expect((await link(relay, 'alice', '198.51.100.1', code)).referral).toBe('self_referral');
    expect((await link(relay, 'dave', '198.51.100.1', code)).referral).toBe('self_referral');
    expect((await link(relay, 'eve', '2001:db8:1:2:ffff::9', code)).referral).toBe('self_referral');
    // A link without a code says nothing of referrals; a player who linked before with no code is not new.
    const frank = await link(relay, 'frank', '203.0.113.7');
    expect(frank.referral).toBeUndefined();
    expect((await link(relay, 'frank', '203.0.113.7', code)).referral).toBe('not_new');

    const listed = await referrals(relay);
    const byReferee = new Map(listed.map((r) => [r.refereeId, r]));
    expect(listed).toHaveLength(4);
    expect(byReferee.get((await link(relay, 'bob', '203.0.113.5')).userId)).toMatchObject({ state: 'pending', referrerId: alice.userId });
    expect(byReferee.get((await link(relay, 'dave', '203.0.113.8')).userId)).toMatchObject({ state: 'refused', reason: 'self_referral' });
    expect(byReferee.get((await link(relay, 'carol', '203.0.113.6')).userId)).toMatchObject({ state: 'refused', reason: 'unknown_code' });
    // A client never claims a program.
    const refused = await claim(relay, alice.token, 'invite', '198.51.100.1');
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('referral_not_claimable');
  });

  it('qualifies only on a payment of afterAchievement, and rewards both players once, each told on their stream', async () => {
    const relay = await start({ ...(await backend.env()), RELAY_CATALOG: catalogFile([COIN, LEVEL, invite({ afterAchievement: 'level' })]) });
    const alice = await link(relay, 'alice', '198.51.100.1');
    const bob = await link(relay, 'bob', '203.0.113.5', await codeOf(relay, alice.token));
    expect(bob.referral).toBe('pending');

    // A coin is paid, but it is not the achievement the program waits for.
    expect((await claim(relay, bob.token, 'coin', '203.0.113.5')).body.status).toBe('paid');
    expect((await claim(relay, bob.token, 'level', '203.0.113.5')).body.status).toBe('paid');
    await expect.poll(async () => (await referralRewards(relay, bob.token)).map((r) => [r.referral, r.status, r.sats])).toEqual([['referee', 'paid', 50]]);
    await expect.poll(async () => (await referralRewards(relay, alice.token)).map((r) => [r.referral, r.status, r.sats])).toEqual([['referrer', 'paid', 100]]);
    // The coin claimed before level did not qualify it: level's payment did (the referral is qualified once).
    expect((await referrals(relay)).map((r) => r.state)).toEqual(['qualified']);
    // Each heard its own reward on its stream (from the start: Alice's one event, Bob's coin, level and reward).
    expect((await readSse(relay.url, alice.token, 1, '0')).map((e) => [e.event, e.data.referral, e.data.status])).toEqual([['reward', 'referrer', 'paid']]);
    expect((await readSse(relay.url, bob.token, 3, '0')).map((e) => [e.data.achievementId, e.data.referral ?? null])).toEqual([
      ['coin', null],
      ['level', null],
      ['invite', 'referee'],
    ]);

    // More payments qualify nothing more: one reward per player per referee and program.
    expect((await claim(relay, bob.token, 'coin', '203.0.113.5')).body.status).toBe('paid');
    expect((await programEntries(relay)).length).toBe(2);
  });

  it('waits for afterPlaySeconds from the first link', async () => {
    const later = { ...(invite({ afterPlaySeconds: 86_400 }) as object), id: 'invite-later' } as CatalogItem;
    const relay = await start({ ...(await backend.env()), RELAY_CATALOG: catalogFile([COIN, invite({ afterPlaySeconds: 1 }), later]) });
    const alice = await link(relay, 'alice', '198.51.100.1');
    const bob = await link(relay, 'bob', '203.0.113.5', await codeOf(relay, alice.token));
    // Claims until one is made a second after the link: that one qualifies `invite`; `invite-later` (a day) stays pending.
    await expect
      .poll(
        async () => {
          await claim(relay, bob.token, 'coin', '203.0.113.5');
          return (await referralRewards(relay, bob.token)).length;
        },
        { timeout: 15_000, interval: 300 },
      )
      .toBe(1);
    expect((await referralRewards(relay, bob.token)).map((r) => r.achievementId)).toEqual(['invite']);
    const states = new Map((await referrals(relay)).map((r) => [r.programId, r.state]));
    expect(states).toEqual(
      new Map([
        ['invite', 'qualified'],
        ['invite-later', 'pending'],
      ]),
    );
  });

  it('the referral farm takes exactly what the rules allow', async () => {
    // 20 fresh gamertags link with Alice's code from Alice's own address, 20 from one other
    // address, each then claims a coin (10 sats, paid). perReferrerDaily 5; caps and budget wide.
    // Allowed: 20 self_referral (nothing); of the other 20, 20 referee rewards paid (20 × 50),
    // 5 referrer rewards paid (5 × 100) and 15 rejected referrer_daily_cap: 1,500 sats of referrals.
    const relay = await start({ ...(await backend.env()), RELAY_CATALOG: catalogFile([COIN, invite({ perReferrerDaily: 5 })]) });
    const alice = await link(relay, 'alice', '198.51.100.7');
    const code = await codeOf(relay, alice.token);
    const own = await Promise.all(Array.from({ length: 20 }, (_, i) => link(relay, `farm-own-${i}`, '198.51.100.7', code)));
    const other = await Promise.all(Array.from({ length: 20 }, (_, i) => link(relay, `farm-other-${i}`, '203.0.113.99', code)));
    expect(own.map((s) => s.referral)).toEqual(Array(20).fill('self_referral'));
    expect(other.map((s) => s.referral)).toEqual(Array(20).fill('pending'));
    const paid = await Promise.all([...own.map((s) => claim(relay, s.token, 'coin', '198.51.100.7')), ...other.map((s) => claim(relay, s.token, 'coin', '203.0.113.99'))]);
    expect(paid.map((r) => r.body.status)).toEqual(Array(40).fill('paid'));

    const settledEntries = async () => (await programEntries(relay)).filter((e) => e.state !== 'sending');
    await expect.poll(async () => (await settledEntries()).length, { timeout: 20_000 }).toBe(40);
    const entries = await settledEntries();
    const referee = entries.filter((e) => e.userId !== alice.userId);
    const referrer = entries.filter((e) => e.userId === alice.userId);
    expect(referee.map((e) => [e.state, e.sats])).toEqual(Array(20).fill(['paid', 50]));
    expect(new Set(referee.map((e) => e.userId))).toEqual(new Set(other.map((s) => s.userId)));
    expect(referrer.filter((e) => e.state === 'paid').map((e) => e.sats)).toEqual(Array(5).fill(100));
    expect(referrer.filter((e) => e.state === 'rejected').map((e) => e.reason)).toEqual(Array(15).fill('referrer_daily_cap'));
    const take = entries.filter((e) => e.state === 'paid').reduce((t, e) => t + e.sats, 0);
    expect(take).toBe(20 * 50 + 5 * 100);
    console.log(`referral farm on ${backend.name}: paid ${take} sats of referrals (20 self_referral, 20 referees paid, 5 referrers paid, 15 referrer_daily_cap)`);

    const listed = await referrals(relay);
    expect(listed.filter((r) => r.state === 'refused' && r.reason === 'self_referral')).toHaveLength(20);
    expect(listed.filter((r) => r.state === 'qualified')).toHaveLength(20);
    expect(listed.filter((r) => r.referrerCapped)).toHaveLength(15);
    const metrics = await (await fetch(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
    expect(metrics).toContain('rewardbus_referrals_total{outcome="self_referral"} 20');
    expect(metrics).toContain('rewardbus_referrals_total{outcome="pending"} 20');
    expect(metrics).toContain('rewardbus_referrals_total{outcome="qualified"} 20');
    expect(metrics).toContain('rewardbus_referrals_total{outcome="referrer_daily_cap"} 15');
  });

  it('a qualification lost with its relay (the payment committed, the rewards never made) is made by the sweep, once, with two relays', async () => {
    const env = await backend.env();
    const withProgram = { ...env, RELAY_CATALOG: catalogFile([COIN, invite()]) };
    const first = await start(withProgram);
    const alice = await link(first, 'alice', '198.51.100.1');
    const bob = await link(first, 'bob', '203.0.113.5', await codeOf(first, alice.token));
    expect(bob.referral).toBe('pending');
    // The relay that pays Bob's coin dies before it qualifies the referral: it is run here without
    // the program, so the payment commits and nothing after it runs, as after a crash.
    relays.splice(relays.indexOf(first), 1);
    await first.close({ graceMs: 0 });
    const blind = await start({ ...env, RELAY_CATALOG: catalogFile([COIN]) }, first.dataDir);
    expect((await claim(blind, bob.token, 'coin', '203.0.113.5')).body.status).toBe('paid');
    expect(await referralRewards(blind, bob.token)).toEqual([]);
    relays.splice(relays.indexOf(blind), 1);
    await blind.close({ graceMs: 0 });

    // Relays with the program start again: each sweeps at start (two at once on PostgreSQL; their
    // embedded sandboxes read the same users file, so either may pay either player).
    const again = await Promise.all(backend.name === 'SQLite' ? [start(withProgram, first.dataDir)] : [start(withProgram, first.dataDir), start(withProgram, first.dataDir)]);
    await expect.poll(async () => (await referralRewards(again[0]!, bob.token)).map((r) => [r.referral, r.status])).toEqual([['referee', 'paid']]);
    await expect.poll(async () => (await referralRewards(again[0]!, alice.token)).map((r) => [r.referral, r.status])).toEqual([['referrer', 'paid']]);
    expect((await programEntries(again[0]!)).length).toBe(2);
  });
});
