// Tournaments over real HTTP (issue 37), with the sandbox as the payments service, on SQLite and
// PostgreSQL: the game's server posts a period's ranking; each place that wins a prize is recorded
// once, in one transaction (all or nothing), paid after the commit, and heard by its player.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { CatalogEntry } from '../../src/relay/index.js';
import type { BalanceView, PlayerSession, RewardHistory, TournamentCatalogEntry, TournamentPosted } from '../../src/wire/relay-api.js';
import { relayBackends } from '../helpers/backends.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const postgresUrl = inject('postgresUrl');
const dir = mkdtempSync(join(tmpdir(), 'rewardbus-tournaments-'));
const SERVER_SECRET = 'game-server-secret-0123456789abcdefghij';

const ENTRIES: Array<CatalogEntry | TournamentCatalogEntry> = [
  { id: 'first-coin', title: 'First coin', sats: 21, repeat: { kind: 'once' } },
  { id: 'cup', kind: 'tournament', title: 'Weekly cup', prizes: [10_000, 5_000, 2_500] },
  { id: 'daily', kind: 'tournament', title: 'Daily high score', prizes: [300, 200, 100] },
];
const CATALOG = join(dir, 'catalog.json');
writeFileSync(CATALOG, JSON.stringify({ achievements: ENTRIES }));
// The same catalog after a deploy that gave the cup a fourth prize.
const CATALOG_MORE_PLACES = join(dir, 'catalog-more-places.json');
writeFileSync(CATALOG_MORE_PLACES, JSON.stringify({ achievements: ENTRIES.map((e) => (e.id === 'cup' ? { ...e, prizes: [10_000, 5_000, 2_500, 1_000] } : e)) }));

const relays: TestRelay[] = [];
afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

type Answer = { status: number; type: string | null; body: TournamentPosted & { code?: string; detail?: string } };
async function post(relay: TestRelay, id: string, body: unknown, secret = SERVER_SECRET): Promise<Answer> {
  const r = await fetch(`${relay.url}/v1/server/tournaments/${id}/results`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify(body),
  });
  return { status: r.status, type: r.headers.get('content-type'), body: (await r.json()) as Answer['body'] };
}
const history = async (relay: TestRelay, token: string) =>
  ((await (await fetch(`${relay.url}/v1/rewards`, { headers: { authorization: `Bearer ${token}` } })).json()) as RewardHistory).rewards;
const balanceOf = async (relay: TestRelay, token: string) =>
  ((await (await fetch(`${relay.url}/v1/balance`, { headers: { authorization: `Bearer ${token}` } })).json()) as BalanceView).sats;
/** POST /v1/players: `{}` makes a guest; a gamertag with the guest's token links and merges it. */
async function session(relay: TestRelay, body: { gamertag?: string; guestToken?: string }) {
  const r = await fetch(`${relay.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(r.status).toBe(201);
  return (await r.json()) as PlayerSession;
}

describe.each(relayBackends(postgresUrl))('tournaments on $name', (backend) => {
  async function start(env: Record<string, string> = {}) {
    const relay = await startTestRelay({ RELAY_CATALOG: CATALOG, RELAY_GAME_SERVER_SECRET: SERVER_SECRET, ...(await backend.env()), ...env });
    relays.push(relay);
    return relay;
  }
  const players = (relay: TestRelay, n: number, prefix = 'racer') => Promise.all(Array.from({ length: n }, (_, i) => relay.link(`${prefix}-${i + 1}`)));

  it('first post: 201 with the prizes in ranking order (place, period), each paid once; the same again: 200, the same records; others: 409', async () => {
    const relay = await start();
    const [a, b, c, d] = await players(relay, 4);
    // By userId or by gamertag; the fourth place is past the prize list.
    const ranking = [b!.userId, 'racer-1', c!.userId, d!.userId];
    const first = await post(relay, 'cup', { period: '2026-W48', ranking });
    expect(first.status).toBe(201);
    expect(first.body.rewards.map((r) => [r.userId, r.sats, r.place, r.period, r.achievementId])).toEqual([
      [b!.userId, 10_000, 1, '2026-W48', 'cup'],
      [a!.userId, 5_000, 2, '2026-W48', 'cup'],
      [c!.userId, 2_500, 3, '2026-W48', 'cup'],
    ]);
    await expect.poll(() => relay.sandbox!.payments().length).toBe(3);
    expect(
      relay
        .sandbox!.payments()
        .map((p) => Number(p.amount) / 1000)
        .sort((x, y) => y - x),
    ).toEqual([10_000, 5_000, 2_500]);
    await expect.poll(async () => (await history(relay, a!.token)).map((r) => [r.status, r.place])).toEqual([['paid', 2]]);

    const again = await post(relay, 'cup', { period: '2026-W48', ranking });
    expect(again.status).toBe(200);
    expect(again.body.rewards.map((r) => r.id)).toEqual(first.body.rewards.map((r) => r.id));
    // The same results named by gamertag in place of a userId are the same results.
    expect((await post(relay, 'cup', { period: '2026-W48', ranking: ['racer-2', a!.userId, c!.userId, d!.userId] })).status).toBe(200);
    const other = await post(relay, 'cup', { period: '2026-W48', ranking: [a!.userId, b!.userId] });
    expect([other.status, other.body.code, other.type]).toEqual([409, 'results_already_posted', 'application/problem+json']);
    // Another period is another post.
    expect((await post(relay, 'cup', { period: '2026-W49', ranking: [a!.userId] })).status).toBe(201);
    await expect.poll(() => relay.sandbox!.payments().length).toBe(4);
    expect(relay.sandbox!.payments()).toHaveLength(4);
  });

  it('refuses unknown players (422 naming them), a player listed twice (422), bad input (400) and any caller without the secret, recording nothing', async () => {
    const relay = await start();
    const [a, b] = await players(relay, 2);
    const unknown = await post(relay, 'cup', { period: '2026-W48', ranking: [a!.userId, 'ghost', b!.userId, 'nobody-else'] });
    expect([unknown.status, unknown.body.code, unknown.type]).toEqual([422, 'unknown_player', 'application/problem+json']);
    expect(unknown.body.detail).toContain('ghost, nobody-else');
    const twice = await post(relay, 'cup', { period: '2026-W48', ranking: [a!.userId, 'racer-2', b!.userId] });
    expect([twice.status, twice.body.code]).toEqual([422, 'duplicate_player']);
    for (const bad of [{ period: '', ranking: [a!.userId] }, { period: '2026-W48', ranking: [] }, { period: '2026-W48' }, { period: '2026-W48', ranking: [1] }])
      expect((await post(relay, 'cup', bad)).body.code).toBe('bad_request');
    expect((await post(relay, 'nope', { period: '2026-W48', ranking: [a!.userId] })).body.code).toBe('unknown_tournament');
    expect((await post(relay, 'cup', { period: '2026-W48', ranking: [a!.userId] }, 'wrong-secret')).status).toBe(401);
    // A player's own token is no game server's secret, and a client cannot claim a tournament.
    expect((await post(relay, 'cup', { period: '2026-W48', ranking: [a!.userId] }, a!.token)).status).toBe(401);
    const claimed = await relay.claim(a!.token, { achievementId: 'cup' });
    expect([claimed.status, claimed.body.code]).toEqual([403, 'not_claimable']);
    expect(await history(relay, a!.token)).toEqual([]);
    expect(relay.sandbox!.payments()).toHaveLength(0);
    // Nothing was recorded: the period is still open.
    expect((await post(relay, 'cup', { period: '2026-W48', ranking: [a!.userId, b!.userId] })).status).toBe(201);
  });

  it('names a player by the gamertag in any case, as the service does (gamertags are case-insensitive): the same results whatever the case', async () => {
    const relay = await start();
    const ada = await relay.link('Ada-Lovelace');
    const bob = await relay.link('bob');
    const first = await post(relay, 'cup', { period: '2026-W48', ranking: ['ada-lovelace', 'BOB'] });
    expect([first.status, first.body.code]).toEqual([201, undefined]);
    expect(first.body.rewards.map((r) => [r.userId, r.place])).toEqual([
      [ada.userId, 1],
      [bob.userId, 2],
    ]);
    // As linked, or by userId: the same results again.
    expect((await post(relay, 'cup', { period: '2026-W48', ranking: ['Ada-Lovelace', bob.userId] })).status).toBe(200);
    // One player named in two cases is one player listed twice.
    expect((await post(relay, 'daily', { period: '2026-11-26', ranking: ['bob', 'Bob'] })).body.code).toBe('duplicate_player');
  });

  it('20 concurrent posts of the same results record and pay each place exactly once', async () => {
    const relay = await start();
    const racers = await players(relay, 5);
    const ranking = racers.map((r) => r.userId);
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(relay, 'daily', { period: '2026-11-26', ranking })));
    expect(answers.map((a) => a.status).sort((x, y) => x - y)).toEqual([...Array(19).fill(200), 201]);
    const ids = answers[0]!.body.rewards.map((r) => r.id);
    for (const a of answers) expect(a.body.rewards.map((r) => r.id)).toEqual(ids);
    await expect.poll(() => relay.sandbox!.payments().length).toBe(3);
    for (const [i, r] of racers.entries()) expect((await history(relay, r.token)).length).toBe(i < 3 ? 1 : 0);
    expect(relay.sandbox!.payments().map((p) => Number(p.amount) / 1000)).toEqual(expect.arrayContaining([300, 200, 100]));
  });

  it('a pool that does not fit the day budget records nothing (409 daily_budget); a prize above the hold threshold is held', async () => {
    const relay = await start({ RELAY_DAILY_BUDGET_SATS: '15000', RELAY_HOLD_ABOVE_SATS: '4000' });
    const [a, b, c] = await players(relay, 3);
    const over = await post(relay, 'cup', { period: '2026-W48', ranking: [a!.userId, b!.userId, c!.userId] });
    expect([over.status, over.body.code, over.type]).toEqual([409, 'daily_budget', 'application/problem+json']);
    expect(await history(relay, a!.token)).toEqual([]);
    // Two places: 15,000 sats, the whole budget; the first two prizes are above 4,000: held for an operator.
    const fits = await post(relay, 'cup', { period: '2026-W48', ranking: [a!.userId, b!.userId] });
    expect(fits.status).toBe(201);
    expect(fits.body.rewards.map((r) => [r.status, r.sats])).toEqual([
      ['held', 10_000],
      ['held', 5_000],
    ]);
    expect(relay.sandbox!.payments()).toHaveLength(0);
    // The budget is spent: a client's claim is refused by it.
    expect((await relay.claim(c!.token, { achievementId: 'first-coin' })).body).toMatchObject({ status: 'rejected', reason: 'daily_budget' });
  });

  it('the same results posted again to a relay whose catalog gives more places (a deploy between the two, or two relays mid-deploy): 200, the prizes recorded', async () => {
    const env = await backend.env();
    const before = await startTestRelay({ RELAY_CATALOG: CATALOG, RELAY_GAME_SERVER_SECRET: SERVER_SECRET, ...env });
    const racers = await players(before, 4);
    const ranking = racers.map((r) => r.userId);
    const first = await post(before, 'cup', { period: '2026-W48', ranking });
    expect(first.status).toBe(201);
    await expect.poll(() => before.sandbox!.payments().length).toBe(3);
    await before.close({ graceMs: 0 });
    const after = await startTestRelay({ RELAY_CATALOG: CATALOG_MORE_PLACES, RELAY_GAME_SERVER_SECRET: SERVER_SECRET, ...env }, {}, before.dataDir);
    relays.push(after);
    // The game's server retries (its answer was lost): the period's prizes are the three recorded, nothing more.
    const again = await post(after, 'cup', { period: '2026-W48', ranking });
    expect([again.status, again.type]).toEqual([200, 'application/json']);
    expect(again.body.rewards.map((r) => [r.id, r.place])).toEqual(first.body.rewards.map((r) => [r.id, r.place]));
    expect(after.sandbox!.payments()).toHaveLength(0);
  });

  it('balance mode: prizes are credited, not sent', async () => {
    const relay = await start({ RELAY_PAYOUT_MODE: 'balance' });
    const [a] = await players(relay, 1);
    const r = await post(relay, 'daily', { period: '2026-11-26', ranking: [a!.userId] });
    expect(r.body.rewards.map((x) => [x.status, x.sats, x.place])).toEqual([['credited', 300, 1]]);
    expect(relay.sandbox!.payments()).toHaveLength(0);
  });

  it('a tournament credited to the balance on an instant relay: its winner sees the prize on GET /v1/balance and withdraws it', async () => {
    // Every achievement paid at once; only this tournament's prizes go to a balance.
    const catalog = join(dir, 'balance-cup.json');
    writeFileSync(catalog, JSON.stringify({ achievements: [...ENTRIES, { id: 'season', kind: 'tournament', title: 'Season', prizes: [400], payout: 'balance' }] }));
    const relay = await start({ RELAY_CATALOG: catalog });
    const [a] = await players(relay, 1);
    const r = await post(relay, 'season', { period: '2026-S1', ranking: [a!.userId] });
    expect(r.body.rewards.map((x) => [x.status, x.sats])).toEqual([['credited', 400]]);
    const auth = { authorization: `Bearer ${a!.token}` };
    const balance = await fetch(`${relay.url}/v1/balance`, { headers: auth });
    expect([balance.status, ((await balance.json()) as { sats?: number }).sats]).toEqual([200, 400]);
    const w = await fetch(`${relay.url}/v1/withdrawals`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({ sats: 400 }),
    });
    expect([w.status, ((await w.json()) as { status?: string }).status]).toEqual([201, 'paid']);
    expect(relay.sandbox!.payments().map((p) => [p.gamertag, p.amount])).toEqual([['racer-1', '400000']]);
  });

  it('balance mode: a guest who placed is credited its prize (held above the threshold), sees it, and keeps it when it links; its id then names the player', async () => {
    // A cap below the prize: a prize is never refused by its player's cap, at the post nor at the link.
    const relay = await start({ RELAY_PAYOUT_MODE: 'balance', RELAY_HOLD_ABOVE_SATS: '4000', RELAY_USER_DAILY_CAP_SATS: '100' });
    const [a] = await players(relay, 1);
    const guest = await session(relay, {});
    const ranking = [guest.userId, a!.userId];
    const first = await post(relay, 'daily', { period: '2026-11-26', ranking });
    expect([first.status, first.body.code]).toEqual([201, undefined]);
    expect(first.body.rewards.map((r) => [r.userId, r.status, r.sats, r.place])).toEqual([
      [guest.userId, 'credited', 300, 1],
      [a!.userId, 'credited', 200, 2],
    ]);
    expect(await balanceOf(relay, guest.token)).toBe(300);
    expect((await history(relay, guest.token)).map((r) => [r.status, r.place, r.period])).toEqual([['credited', 1, '2026-11-26']]);
    const again = await post(relay, 'daily', { period: '2026-11-26', ranking });
    expect([again.status, again.body.rewards.map((r) => r.id)]).toEqual([200, first.body.rewards.map((r) => r.id)]);
    // Above RELAY_HOLD_ABOVE_SATS: held for an operator, as any prize.
    const cup = await post(relay, 'cup', { period: '2026-W48', ranking: [guest.userId] });
    expect(cup.body.rewards.map((r) => [r.userId, r.status, r.sats])).toEqual([[guest.userId, 'held', 10_000]]);

    const ada = await session(relay, { gamertag: 'ada', guestToken: guest.token });
    expect(ada.merge).toMatchObject({ guestId: guest.userId, moved: 2, movedSats: 10_300, dropped: [] });
    expect(await balanceOf(relay, ada.token)).toBe(300);
    expect((await history(relay, ada.token)).map((r) => [r.id, r.status, r.place]).sort()).toEqual(
      [
        [first.body.rewards[0]!.id, 'credited', 1],
        [cup.body.rewards[0]!.id, 'held', 1],
      ].sort(),
    );
    // The game's server retries after the link: the same results, the prize as it is now (the player's).
    const retried = await post(relay, 'daily', { period: '2026-11-26', ranking });
    expect([retried.status, retried.body.rewards.map((r) => [r.id, r.userId])]).toEqual([
      200,
      [
        [first.body.rewards[0]!.id, ada.userId],
        [first.body.rewards[1]!.id, a!.userId],
      ],
    ]);
    // A merged guest's id names its player: its prize is the player's; listed beside the player, twice.
    const next = await post(relay, 'daily', { period: '2026-11-27', ranking: [guest.userId] });
    expect([next.status, next.body.rewards.map((r) => [r.userId, r.status, r.sats])]).toEqual([201, [[ada.userId, 'credited', 300]]]);
    expect(await balanceOf(relay, ada.token)).toBe(600);
    for (const name of ['ada', ada.userId]) {
      const twice = await post(relay, 'daily', { period: '2026-11-28', ranking: [guest.userId, a!.userId, name] });
      expect([twice.status, twice.body.code]).toEqual([422, 'duplicate_player']);
    }
    // Only a guest's id as the relay makes it is a guest: any other unknown name is still refused.
    const shapes = [guest.userId.toUpperCase(), `guest_${guest.userId.slice(6, -1)}`, 'guest_ada'];
    const unknown = await post(relay, 'daily', { period: '2026-11-28', ranking: shapes });
    expect([unknown.status, unknown.body.code, unknown.body.detail]).toEqual([422, 'unknown_player', `Never linked with this relay: ${shapes.join(', ')}`]);
    expect(relay.sandbox!.payments()).toHaveLength(0);
  });

  it('a tournament paid at once cannot pay a guest (422 unknown_player naming it as a guest), records and pays nothing; once it links, its id names the player', async () => {
    const catalog = join(dir, 'instant-sprint.json');
    writeFileSync(catalog, JSON.stringify({ achievements: [...ENTRIES, { id: 'sprint', kind: 'tournament', title: 'Sprint', prizes: [50, 20], payout: 'instant' }] }));
    // Guest play is on (the relay credits), this tournament pays at once.
    const relay = await start({ RELAY_CATALOG: catalog, RELAY_PAYOUT_MODE: 'balance' });
    const [a] = await players(relay, 1);
    const guest = await session(relay, {});
    const refused = await post(relay, 'sprint', { period: '2026-11-26', ranking: [a!.userId, guest.userId] });
    expect([refused.status, refused.body.code, refused.type]).toEqual([422, 'unknown_player', 'application/problem+json']);
    expect(refused.body.detail).toBe(`Guests have no gamertag to be paid at once: ${guest.userId}`);
    expect(await history(relay, a!.token)).toEqual([]);
    expect(await history(relay, guest.token)).toEqual([]);
    expect(relay.sandbox!.payments()).toHaveLength(0);
    // Nothing was recorded: once the guest linked, the same period is posted, the guest's place paid to its player.
    const ada = await session(relay, { gamertag: 'ada', guestToken: guest.token });
    const paid = await post(relay, 'sprint', { period: '2026-11-26', ranking: [a!.userId, guest.userId] });
    expect([paid.status, paid.body.rewards.map((r) => [r.userId, r.sats])]).toEqual([
      201,
      [
        [a!.userId, 50],
        [ada.userId, 20],
      ],
    ]);
    await expect.poll(() => relay.sandbox!.payments().length).toBe(2);
    expect(
      relay
        .sandbox!.payments()
        .map((p) => [p.gamertag, Number(p.amount) / 1000])
        .sort(),
    ).toEqual([
      ['ada', 20],
      ['racer-1', 50],
    ]);
    expect((await post(relay, 'sprint', { period: '2026-11-26', ranking: [a!.userId, guest.userId] })).status).toBe(200);
    // A guest placed past the prizes wins nothing, so needs no gamertag: the post stands.
    const other = await session(relay, {});
    const past = await post(relay, 'sprint', { period: '2026-11-27', ranking: [ada.userId, a!.userId, other.userId] });
    expect([past.status, past.body.rewards.map((r) => r.userId)]).toEqual([201, [ada.userId, a!.userId]]);
  });
});
