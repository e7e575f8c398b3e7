// A bot farm against the relay, as an attacker would run it: over real HTTP, many gamertags,
// addresses faked through a trusted proxy (X-Forwarded-For on loopback), proofs forged and
// replayed. Each attack runs twice: against a relay with the defenses on, which must pay exactly
// what its settings allow, and against one with them off, to show what it would have taken. The
// sats counted are what the sandbox (the payments service) actually paid.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { type CatalogEntry, type PlayerSession, type Problem, type RewardRecord, signUnlock } from '../../src/relay/index.js';
import { type Backend, relayBackends } from '../helpers/backends.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';
import { openSse } from '../helpers/sse.js';

const postgresUrl = inject('postgresUrl');
const GAME_SECRET = 'the-game-servers-secret-of-32-characters';
const dir = mkdtempSync(join(tmpdir(), 'rewardbus-farm-'));

/** The same achievements, with and without what they ask of a claim. */
const ACHIEVEMENTS: CatalogEntry[] = [
  { id: 'level-complete', title: 'Level complete', sats: 100, repeat: { kind: 'once' }, minPlaySeconds: 5 },
  { id: 'daily-login', title: 'Daily login', sats: 10, repeat: { kind: 'daily' } },
  { id: 'boss', title: 'Boss defeated', sats: 20, repeat: { kind: 'once' }, proof: 'server' },
  { id: 'jackpot', title: 'Jackpot', sats: 500, repeat: { kind: 'once' } },
  { id: 'golden', title: 'Golden trophy', sats: 30, repeat: { kind: 'once' }, hold: true },
];
const catalogFile = (name: string, entries: CatalogEntry[]) => {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ achievements: entries }));
  return path;
};
const DEFENDED_CATALOG = catalogFile('defended', ACHIEVEMENTS);
const OPEN_CATALOG = catalogFile(
  'open',
  ACHIEVEMENTS.map(({ minPlaySeconds: _m, proof: _p, hold: _h, ...plain }) => plain),
);

/** Every defense on. The address cap is high here; the address farm runs with 20. */
const DEFENDED = {
  RELAY_CATALOG: DEFENDED_CATALOG,
  RELAY_ADDRESS_DAILY_CAP_SATS: '1000',
  RELAY_LINKS_PER_ADDRESS_PER_DAY: '5',
  RELAY_HOLD_ABOVE_SATS: '200',
  RELAY_GAME_SERVER_SECRET: GAME_SECRET,
};
const OPEN = { RELAY_CATALOG: OPEN_CATALOG };

const BACKENDS = relayBackends(postgresUrl);

/** The farm's take, per backend and attack: with the defenses on, and off. */
const takes: Record<string, Record<string, { defended: number; open: number }>> = {};
afterAll(() => {
  for (const [backend, attacks] of Object.entries(takes)) {
    const total = Object.values(attacks).reduce((t, a) => ({ defended: t.defended + a.defended, open: t.open + a.open }), { defended: 0, open: 0 });
    console.log(`bot farm on ${backend}: ${JSON.stringify(attacks)}`);
    console.log(`bot farm on ${backend}: defenses ON paid ${total.defended} sats; defenses OFF paid ${total.open} sats`);
  }
});

const relays: TestRelay[] = [];
const streams: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(streams.splice(0).map((s) => s.close()));
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

async function start(backend: Backend, env: Record<string, string>, options: Parameters<typeof startTestRelay>[1] = {}) {
  const relay = await startTestRelay({ RELAY_TRUST_PROXY: '127.0.0.1', ...(await backend.env()), ...env }, options);
  relays.push(relay);
  return relay;
}

/** Sats the service paid, and so the farm took. */
const paidSats = (relay: TestRelay) => relay.sandbox!.payments().reduce((sum, p) => sum + Number(p.amount) / 1000, 0);

/** A claim's answer: a reward record, or a problem (status a number then). */
type Answer = Omit<RewardRecord, 'status'> & Partial<Omit<Problem, 'status'>> & { status: RewardRecord['status'] | number };

/** A client of the relay from a given address (X-Forwarded-For, believed from loopback). */
function bot(relay: TestRelay, address: string) {
  const headers = (more: Record<string, string> = {}) => ({ 'content-type': 'application/json', 'x-forwarded-for': address, ...more });
  return {
    async link(gamertag: string) {
      const r = await fetch(`${relay.url}/v1/players`, { method: 'POST', headers: headers(), body: JSON.stringify({ gamertag }) });
      return { status: r.status, body: (await r.json()) as PlayerSession & Problem };
    },
    async claim(token: string, body: { achievementId: string; proof?: string }, key: string = randomUUID()) {
      const r = await fetch(`${relay.url}/v1/rewards`, {
        method: 'POST',
        headers: headers({ authorization: `Bearer ${token}`, 'idempotency-key': key }),
        body: JSON.stringify(body),
      });
      return { status: r.status, headers: r.headers, body: (await r.json()) as Answer };
    },
  };
}

async function linked(relay: TestRelay, address: string, gamertag: string) {
  const b = bot(relay, address);
  const r = await b.link(gamertag);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { ...b, token: r.body.token };
}

const admin = (relay: TestRelay, path: string, operator = 'ops-ann') =>
  fetch(`${relay.url}/admin/api${path}`, { method: path.includes('/review/') ? 'POST' : 'GET', headers: { authorization: `Bearer ${relay.adminToken}`, 'x-operator': operator } });

describe.each(BACKENDS)('a bot farm against the relay on $name', (backend) => {
  const record = (attack: string, defended: number, open: number) => {
    (takes[backend.name] ??= {})[attack] = { defended, open };
  };

  it('claims at once after link: too early (425, nothing recorded as final, nothing paid); the honest player who waits is paid once', async () => {
    const rush = async (relay: TestRelay) => {
      const bots = await Promise.all(Array.from({ length: 5 }, (_, i) => linked(relay, `203.0.113.${10 + i}`, `rusher-${i}`)));
      return Promise.all(bots.map(async (b) => ({ b, key: randomUUID(), r: await b.claim(b.token, { achievementId: 'level-complete' }) })));
    };
    const defended = await start(backend, DEFENDED);
    const tries = await rush(defended);
    for (const { r } of tries) {
      expect(r.status).toBe(425);
      expect(r.body).toMatchObject({ code: 'too_early', status: 425 });
      expect(Date.parse(r.body.retryAt!)).toBeGreaterThan(Date.now() - 2000);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(paidSats(defended)).toBe(0);
    // One of them plays on, keeping its intent (the same key) and asking again when due.
    const honest = tries[0]!.b;
    const key = randomUUID();
    expect((await honest.claim(honest.token, { achievementId: 'level-complete' }, key)).status).toBe(425);
    await expect.poll(async () => (await honest.claim(honest.token, { achievementId: 'level-complete' }, key)).body.status, { timeout: 15_000, interval: 250 }).toBe('paid');
    expect((await honest.claim(honest.token, { achievementId: 'level-complete' }, key)).headers.get('idempotent-replayed')).toBe('true');
    expect(paidSats(defended)).toBe(100);

    const open = await start(backend, OPEN);
    expect((await rush(open)).map((t) => t.r.body.status)).toEqual(Array(5).fill('paid'));
    record('claim at once (5 bots, 1 waits)', paidSats(defended), paidSats(open));
  });

  it('20 gamertags from one address, sequential and concurrent (IPv6 by /64): 20 sats an address, never more', async () => {
    const farm = async (relay: TestRelay) => {
      // Linked from addresses of their own (a proxy pool), then claiming from one machine.
      const seq = await Promise.all(Array.from({ length: 20 }, (_, i) => linked(relay, `198.18.0.${i + 1}`, `seq-${i}`)));
      const conc = await Promise.all(Array.from({ length: 20 }, (_, i) => linked(relay, `198.18.1.${i + 1}`, `conc-${i}`)));
      const sequential: Answer[] = [];
      for (const b of seq) sequential.push((await bot(relay, '203.0.113.7').claim(b.token, { achievementId: 'daily-login' })).body);
      const concurrent = await Promise.all(
        conc.map(async (b, i) => (await bot(relay, `2001:db8:1:2::${(i + 1).toString(16)}`).claim(b.token, { achievementId: 'daily-login' })).body),
      );
      return { sequential, concurrent };
    };
    const defended = await start(backend, { ...DEFENDED, RELAY_ADDRESS_DAILY_CAP_SATS: '20', RELAY_LINKS_PER_ADDRESS_PER_DAY: '0' });
    const d = await farm(defended);
    for (const outcome of [d.sequential, d.concurrent]) {
      expect(outcome.filter((r) => r.status === 'paid')).toHaveLength(2);
      expect(outcome.filter((r) => r.status === 'rejected' && r.reason === 'address_daily_cap')).toHaveLength(18);
    }
    expect(paidSats(defended)).toBe(40);

    const open = await start(backend, OPEN);
    await farm(open);
    expect(paidSats(open)).toBe(400);
    record('20+20 gamertags from 2 addresses', paidSats(defended), paidSats(open));
  });

  it('20 gamertags linked from one address: 5 get a token, 15 are refused (429 too_many_players); linking one again is free', async () => {
    const farm = async (relay: TestRelay) => {
      const b = bot(relay, '192.0.2.77');
      const links = await Promise.all(Array.from({ length: 20 }, (_, i) => b.link(`linker-${i}`)));
      for (const l of links.filter((x) => x.status === 201)) await b.claim(l.body.token, { achievementId: 'daily-login' });
      return links;
    };
    const defended = await start(backend, DEFENDED);
    const links = await farm(defended);
    expect(links.filter((l) => l.status === 201)).toHaveLength(5);
    const refused = links.filter((l) => l.status === 429);
    expect(refused).toHaveLength(15);
    for (const r of refused) {
      expect(r.body.code).toBe('too_many_players');
      expect(r.body).not.toHaveProperty('token');
    }
    const again = links.find((l) => l.status === 201)!.body.gamertag;
    expect((await bot(defended, '192.0.2.77').link(again)).status).toBe(201);
    expect(paidSats(defended)).toBe(50);

    const open = await start(backend, OPEN);
    expect((await farm(open)).every((l) => l.status === 201)).toBe(true);
    expect(paidSats(open)).toBe(200);
    record('20 links from 1 address', paidSats(defended), paidSats(open));
  });

  it('proofs: unsigned, forged, expired, another player’s, another achievement’s and replayed ones are refused without a payment; the honest one pays once', async () => {
    const farm = async (relay: TestRelay) => {
      const sign = (gamertag: string, over: { achievementId?: string; ttlSeconds?: number; secret?: string } = {}) =>
        signUnlock(over.secret ?? GAME_SECRET, {
          gamertag,
          achievementId: over.achievementId ?? 'boss',
          ...(over.ttlSeconds !== undefined ? { ttlSeconds: over.ttlSeconds } : {}),
        });
      const alice = await linked(relay, '192.0.2.1', 'alice');
      const aliceProof = sign('Alice');
      const honest = await alice.claim(alice.token, { achievementId: 'boss', proof: aliceProof });
      const replayedKey = randomUUID();
      const attacks: Record<string, { achievementId: string; proof?: string }> = {
        unsigned: { achievementId: 'boss' },
        forged: { achievementId: 'boss', proof: sign('unsigned', { secret: 'not-the-game-servers-secret-32-characters' }) },
        expired: { achievementId: 'boss', proof: sign('expired', { ttlSeconds: -1 }) },
        other_player: { achievementId: 'boss', proof: aliceProof },
        other_achievement: { achievementId: 'boss', proof: sign('other_achievement', { achievementId: 'level-complete' }) },
      };
      const outcomes: Record<string, Answer> = {};
      let i = 10;
      for (const [name, body] of Object.entries(attacks)) {
        const b = await linked(relay, `192.0.2.${i++}`, name);
        outcomes[name] = (await b.claim(b.token, body)).body;
      }
      // Alice's proof, again: under a new key (refused), and the first claim's retry (replayed as it was).
      const replayed = (await alice.claim(alice.token, { achievementId: 'boss', proof: aliceProof }, replayedKey)).body;
      return { honest: honest.body, outcomes, replayed };
    };
    const defended = await start(backend, DEFENDED);
    const d = await farm(defended);
    expect(d.honest.status).toBe('paid');
    expect(Object.fromEntries(Object.entries(d.outcomes).map(([k, r]) => [k, `${r.status}:${r.reason}`]))).toEqual({
      unsigned: 'rejected:proof_required',
      forged: 'rejected:proof_invalid',
      expired: 'rejected:proof_expired',
      other_player: 'rejected:proof_other_player',
      other_achievement: 'rejected:proof_other_achievement',
    });
    expect(d.replayed).toMatchObject({ status: 'rejected', reason: 'proof_used' });
    expect(paidSats(defended)).toBe(20);

    const open = await start(backend, OPEN);
    await farm(open);
    expect(paidSats(open)).toBe(120);
    record('proofs (5 bad, 1 replayed, 1 honest)', paidSats(defended), paidSats(open));
  });

  it('a single proof raced under many keys pays once', async () => {
    const relay = await start(backend, {
      ...DEFENDED,
      RELAY_CATALOG: catalogFile('repeat-boss', [{ id: 'boss', title: 'Boss', sats: 20, repeat: { kind: 'cooldown', seconds: 0 }, proof: 'server' }]),
    });
    const alice = await linked(relay, '192.0.2.1', 'alice');
    const proof = signUnlock(GAME_SECRET, { gamertag: 'alice', achievementId: 'boss' });
    const racing = await Promise.all(Array.from({ length: 10 }, () => alice.claim(alice.token, { achievementId: 'boss', proof })));
    expect(racing.filter((r) => r.body.status === 'paid')).toHaveLength(1);
    expect(racing.filter((r) => r.body.reason === 'proof_used')).toHaveLength(9);
    expect(paidSats(relay)).toBe(20);
  });

  it('held claims: nothing paid until an operator approves; two approving at once pay once; deny pays nothing; a restart leaves held alone', async () => {
    const farm = async (relay: TestRelay) => {
      const b = await linked(relay, '192.0.2.50', 'whale');
      const jackpot = await b.claim(b.token, { achievementId: 'jackpot' });
      const golden = await b.claim(b.token, { achievementId: 'golden' });
      return { b, jackpot: jackpot.body, golden: golden.body };
    };
    let defended = await start(backend, DEFENDED);
    const d = await farm(defended);
    const stream = await openSse(defended.url, d.b.token);
    streams.push(stream);
    expect(d.jackpot).toMatchObject({ status: 'held', sats: 500 });
    expect(d.golden).toMatchObject({ status: 'held', sats: 30 });
    await stream.until((m) => m.event === 'reward' && m.data.id === d.jackpot.id && m.data.status === 'held');
    expect(paidSats(defended)).toBe(0);
    const metrics = await (await fetch(`${defended.url}/metrics`, { headers: { authorization: `Bearer ${defended.adminToken}` } })).text();
    expect(metrics).toMatch(/^rewardbus_held_open 2$/m);
    const held = (await (await admin(defended, '/held')).json()) as { entries: Array<{ id: string; address: string }> };
    expect(held.entries.map((e) => e.id).sort()).toEqual([d.jackpot.id, d.golden.id].sort());
    expect(held.entries[0]!.address).toBe('192.0.2.50');

    // A restart (recovery at start) never pays a held claim.
    const restarted = await defended.restart();
    relays.splice(relays.indexOf(defended), 1, restarted);
    defended = restarted;
    expect(defended.sandbox!.payments()).toHaveLength(0);
    expect(((await (await admin(defended, '/held')).json()) as { entries: unknown[] }).entries).toHaveLength(2);

    const [one, two] = await Promise.all([admin(defended, `/review/${d.jackpot.id}/approve`, 'ops-ann'), admin(defended, `/review/${d.jackpot.id}/approve`, 'ops-bob')]);
    expect([one.status, two.status].sort()).toEqual([200, 404]);
    const won = (await (one.status === 200 ? one : two).json()) as { entry: { state: string }; audit: Array<{ action: string; fromState: string; toState: string }> };
    expect(won.entry.state).toBe('paid');
    expect(won.audit).toMatchObject([{ action: 'approve', fromState: 'held', toState: 'sending' }]);
    const denied = await admin(defended, `/review/${d.golden.id}/deny`);
    expect(denied.status).toBe(200);
    expect(((await denied.json()) as { entry: { state: string; reason: string } }).entry).toMatchObject({ state: 'rejected', reason: 'denied_by_operator' });
    expect((await admin(defended, `/review/${d.golden.id}/approve`)).status).toBe(404);
    expect(defended.sandbox!.payments().map((p) => p.comment)).toEqual([expect.stringContaining(d.jackpot.id)]);
    expect(paidSats(defended)).toBe(500);
    // The player hears the outcomes through the same stream: held, then paid or rejected.
    const heard = await openSse(defended.url, d.b.token);
    streams.push(heard);
    await heard.until((m) => m.event === 'reward' && m.data.id === d.golden.id && m.data.status === 'rejected');
    expect(heard.events.filter((m) => m.data.id === d.jackpot.id).map((m) => m.data.status)).toEqual(['held', 'paid']);

    const open = await start(backend, OPEN);
    await farm(open);
    expect(paidSats(open)).toBe(530);
    record('held claims (1 approved twice, 1 denied)', paidSats(defended), paidSats(open));
  });

  it('a human check at link that refuses: 403 link_refused, no token', async () => {
    const seen: Array<{ gamertag: string; humanCheck?: string }> = [];
    const relay = await start(
      backend,
      {},
      {
        relay: {
          verifyLink: (_request, link) => {
            seen.push(link);
            return link.humanCheck === 'human';
          },
        },
      },
    );
    const refused = await fetch(`${relay.url}/v1/players`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gamertag: 'robot', humanCheck: 'beep' }),
    });
    expect(refused.status).toBe(403);
    const body = (await refused.json()) as Problem & { token?: string };
    expect(body.code).toBe('link_refused');
    expect(body.token).toBeUndefined();
    const passed = await fetch(`${relay.url}/v1/players`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gamertag: 'person', humanCheck: 'human' }),
    });
    expect(passed.status).toBe(201);
    expect(seen.map((s) => [s.gamertag, s.humanCheck])).toEqual([
      ['robot', 'beep'],
      ['person', 'human'],
    ]);
  });
});
