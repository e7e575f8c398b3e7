import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { DEFAULT_CATALOG } from '../../src/relay/index.js';
import type { CatalogResponse, RewardClaimBatchResult } from '../../src/wire/relay-api.js';
import { freshDatabase } from '../helpers/postgres.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const postgresUrl = inject('postgresUrl');
const BACKENDS = [
  { name: 'SQLite', env: async (): Promise<Record<string, string>> => ({}) },
  ...(postgresUrl
    ? [{ name: 'PostgreSQL', env: async () => ({ RELAY_DATABASE_URL: await freshDatabase(postgresUrl, { migrated: true }), RELAY_SECRET: `${randomUUID()}${randomUUID()}` }) }]
    : []),
];

let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

const everyCoin = {
  relay: { catalog: [...DEFAULT_CATALOG.map(({ minPlaySeconds: _wait, ...a }) => a), { id: 'coin', title: 'Coin', sats: 1, repeat: { kind: 'cooldown' as const, seconds: 0 } }] },
};

async function batch(token: string | undefined, body: unknown) {
  const r = await fetch(`${relay!.url}/v1/rewards/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: r.status, type: r.headers.get('content-type'), body: (await r.json()) as RewardClaimBatchResult & { code?: string } };
}

describe.each(BACKENDS)('POST /v1/rewards/batch on $name', (backend) => {
  it('decides each claim as if sent alone: paid, replayed, unknown, an amount, a bad key, a key twice; nothing refused is paid', async () => {
    relay = await startTestRelay({ RELAY_USER_DAILY_CAP_SATS: '0', ...(await backend.env()) }, everyCoin);
    const player = await relay.link('alice');
    const earlier = await relay.claim(player.token, { achievementId: 'coin' });
    const [a, b] = [randomUUID(), randomUUID()];
    const r = await batch(player.token, {
      claims: [
        { idempotencyKey: a, achievementId: 'coin' },
        { idempotencyKey: earlier.body.idempotencyKey, achievementId: 'coin' },
        { idempotencyKey: randomUUID(), achievementId: 'no-such-thing' },
        { idempotencyKey: randomUUID(), achievementId: 'coin', amount: 1_000_000 },
        { idempotencyKey: 'not-a-uuid', achievementId: 'coin' },
        { idempotencyKey: b, achievementId: 'first-coin' },
        { idempotencyKey: a, achievementId: 'coin' },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.results.map((x) => [x.status, 'reward' in x ? x.reward.status : x.problem.code])).toEqual([
      [201, 'paid'],
      [201, 'paid'],
      [404, 'unknown_achievement'],
      [400, 'bad_request'],
      [400, 'idempotency_key_required'],
      [201, 'paid'],
      [400, 'bad_request'],
    ]);
    expect(r.body.results[1]).toMatchObject({ replayed: true, reward: { id: earlier.body.id } });
    expect(r.body.results[3]).toMatchObject({ problem: { detail: expect.stringContaining('amount') } });
    // The earlier claim and the two new ones: three payments, each to alice, at the catalog's amounts.
    expect(relay.sandbox!.payments().map((p) => p.amount)).toEqual(['1000', '1000', '21000']);

    // The same batch again replays: nothing new is paid.
    const again = await batch(player.token, {
      claims: [
        { idempotencyKey: a, achievementId: 'coin' },
        { idempotencyKey: b, achievementId: 'first-coin' },
      ],
    });
    expect(again.body.results.map((x) => 'reward' in x && x.replayed)).toEqual([true, true]);
    expect(relay.sandbox!.payments()).toHaveLength(3);
  });

  it("holds a full batch of one player's claims to the player's daily cap: 25 at once, 10 paid, 15 refused, none twice", async () => {
    relay = await startTestRelay({ RELAY_USER_DAILY_CAP_SATS: '10', ...(await backend.env()) }, everyCoin);
    const player = await relay.link('alice');
    const claims = Array.from({ length: 25 }, () => ({ idempotencyKey: randomUUID(), achievementId: 'coin' }));
    const r = await batch(player.token, { claims });
    const statuses = r.body.results.map((x) => ('reward' in x ? x.reward.status : x.problem.code));
    expect(statuses.filter((s) => s === 'paid')).toHaveLength(10);
    expect(r.body.results.filter((x) => 'reward' in x && x.reward.status === 'rejected' && x.reward.reason === 'user_daily_cap')).toHaveLength(15);
    expect(relay.sandbox!.payments()).toHaveLength(10);
    expect(r.body.results.map((x) => x.idempotencyKey)).toEqual(claims.map((c) => c.idempotencyKey));
  });
});

describe('POST /v1/rewards/batch', () => {
  it('is offered in the catalog, and refuses a malformed envelope whole (problem+json), recording nothing', async () => {
    relay = await startTestRelay({}, everyCoin);
    const catalog = (await (await fetch(`${relay.url}/v1/catalog`)).json()) as CatalogResponse;
    expect(catalog.claimBatchMax).toBe(25);
    const player = await relay.link('alice');
    const claims = (n: number) => Array.from({ length: n }, () => ({ idempotencyKey: randomUUID(), achievementId: 'coin' }));
    for (const body of [{ claims: claims(26) }, { claims: [] }, { claims: claims(1), amount: 5 }, [claims(1)], 'not json']) {
      const r = await batch(player.token, body);
      expect(r.status).toBe(400);
      expect(r.type).toBe('application/problem+json');
    }
    expect((await batch(undefined, { claims: claims(1) })).status).toBe(401);
    expect((await fetch(`${relay.url}/v1/rewards/batch`, { headers: { authorization: `Bearer ${player.token}` } })).status).toBe(405);
    const history = await fetch(`${relay.url}/v1/rewards`, { headers: { authorization: `Bearer ${player.token}` } });
    expect(((await history.json()) as { rewards: unknown[] }).rewards).toEqual([]);
    expect(relay.sandbox!.payments()).toEqual([]);
  });

  it("counts each claim against the player's and the address's rate limits, as its own request would", async () => {
    relay = await startTestRelay({ RELAY_RATE_LIMIT_PER_MINUTE: '4', RELAY_USER_DAILY_CAP_SATS: '0' }, everyCoin);
    const claims = () => Array.from({ length: 5 }, () => ({ idempotencyKey: randomUUID(), achievementId: 'coin' }));
    // The address: the link took 1 of its 4, the request (with its first claim) 1, two more claims 2.
    const alice = await relay.link('alice');
    const r = await batch(alice.token, { claims: claims() });
    expect(r.body.results.map((x) => x.status)).toEqual([201, 201, 201, 429, 429]);
    expect(r.body.results[3]).toMatchObject({ problem: { code: 'rate_limited' }, retryAfter: expect.any(Number) });
    expect(relay.sandbox!.payments()).toHaveLength(3);
  });

  it('answers a claim the relay failed on with its own 500, and decides the others', async () => {
    const verifyClaim = (claim: { achievementId: string }) => {
      if (claim.achievementId === 'first-coin') throw new Error('the game server is down');
      return true;
    };
    relay = await startTestRelay({ RELAY_USER_DAILY_CAP_SATS: '0' }, { relay: { ...everyCoin.relay, verifyClaim } });
    const player = await relay.link('alice');
    const r = await batch(player.token, {
      claims: ['coin', 'first-coin', 'coin'].map((achievementId) => ({ idempotencyKey: randomUUID(), achievementId })),
    });
    expect(r.status).toBe(200);
    expect(r.body.results.map((x) => [x.status, 'reward' in x ? x.reward.status : x.problem.code])).toEqual([
      [201, 'paid'],
      [500, 'internal'],
      [201, 'paid'],
    ]);
    expect(relay.sandbox!.payments()).toHaveLength(2);
  });
});
