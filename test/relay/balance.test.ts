// Balance mode over real HTTP, with the sandbox as the payments service, on SQLite and PostgreSQL
// (issue 36): claims credit a balance and call no service; a withdrawal is one payment of the
// right sum to the player's gamertag, debited before the service is called; refusals change nothing.
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import type { CatalogEntry } from '../../src/relay/index.js';
import { type SandboxOptions, TEST_GAMERTAGS } from '../../src/sandbox/index.js';
import type { BalanceView, PlayerSession, WithdrawalList, WithdrawalView } from '../../src/wire/relay-api.js';
import { relayBackends } from '../helpers/backends.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';
import { readSse } from '../helpers/sse.js';

const postgresUrl = inject('postgresUrl');
const dir = mkdtempSync(join(tmpdir(), 'rewardbus-balance-'));

const ACHIEVEMENTS: CatalogEntry[] = [
  { id: 'first-coin', title: 'First coin', sats: 21, repeat: { kind: 'once' } },
  { id: 'coin', title: 'A coin', sats: 50, repeat: { kind: 'cooldown', seconds: 0 } },
  { id: 'boss', title: 'Boss beaten', sats: 400, repeat: { kind: 'cooldown', seconds: 0 } },
  { id: 'instant-coin', title: 'A coin, paid at once', sats: 5, repeat: { kind: 'cooldown', seconds: 0 }, payout: 'instant' },
];
const CATALOG = join(dir, 'catalog.json');
writeFileSync(CATALOG, JSON.stringify({ achievements: ACHIEVEMENTS }));
const SERVER_SECRET = 'game-server-secret-0123456789abcdefghij';

const relays: TestRelay[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

type Answer<T> = { status: number; headers: Headers; body: T & { code?: string } };
async function call<T>(relay: TestRelay, token: string, method: string, path: string, body?: unknown, key?: string): Promise<Answer<T>> {
  const r = await fetch(`${relay.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(key ? { 'idempotency-key': key } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: r.status, headers: r.headers, body: (await r.json()) as T & { code?: string } };
}
const balanceOf = async (relay: TestRelay, token: string) => (await call<BalanceView>(relay, token, 'GET', '/v1/balance')).body;
const withdraw = (relay: TestRelay, token: string, sats?: number, key = randomUUID()) =>
  call<WithdrawalView>(relay, token, 'POST', '/v1/withdrawals', sats === undefined ? {} : { sats }, key);

describe.each(relayBackends(postgresUrl))('balance mode on $name', (backend) => {
  async function start(env: Record<string, string> = {}, sandbox: SandboxOptions = {}) {
    const relay = await startTestRelay(
      {
        RELAY_CATALOG: CATALOG,
        RELAY_PAYOUT_MODE: 'balance',
        RELAY_MIN_WITHDRAWAL_SATS: '50',
        RELAY_GAME_SERVER_SECRET: SERVER_SECRET,
        ...(await backend.env()),
        ...env,
      },
      { sandbox },
    );
    relays.push(relay);
    return relay;
  }
  /** A player with `coins` coins (50 sats each) credited. */
  async function earner(relay: TestRelay, gamertag: string, coins: number) {
    const { token, userId } = await relay.link(gamertag);
    for (let i = 0; i < coins; i++) expect((await relay.claim(token, { achievementId: 'coin' })).body.status).toBe('credited');
    return { token, userId };
  }

  it('credits claims to the balance and calls no service until a withdrawal, which is one payment of the sum to the gamertag', async () => {
    const relay = await start();
    const { token, userId } = await relay.link('ada');
    const first = await relay.claim(token, { achievementId: 'first-coin' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ status: 'credited', sats: 21, userId });
    await relay.claim(token, { achievementId: 'coin' });
    await relay.claim(token, { achievementId: 'coin' });
    expect(relay.sandbox!.payments()).toHaveLength(0);
    expect(await balanceOf(relay, token)).toMatchObject({ sats: 121, withdrawableSats: 121, minWithdrawalSats: 50, withdrawnTodaySats: 0 });

    const key = randomUUID();
    const w = await withdraw(relay, token, 100, key);
    expect(w.status).toBe(201);
    expect(w.body).toMatchObject({ sats: 100, status: 'paid' });
    const paid = relay.sandbox!.payments();
    expect(paid).toHaveLength(1);
    expect(paid[0]).toMatchObject({ gamertag: 'ada', amount: '100000', receiverId: userId });
    expect(w.body.paymentId).toBe(paid[0]!.transactionId);
    expect(await balanceOf(relay, token)).toMatchObject({ sats: 21, withdrawnTodaySats: 100 });

    // The same key replays the answer; nothing is paid again.
    const again = await withdraw(relay, token, 100, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(w.body.id);
    expect(relay.sandbox!.payments()).toHaveLength(1);
    const list = await call<WithdrawalList>(relay, token, 'GET', '/v1/withdrawals');
    expect(list.body.withdrawals.map((x) => [x.id, x.status, x.sats])).toEqual([[w.body.id, 'paid', 100]]);
  });

  it('pays 20 concurrent withdrawals of the whole balance under different keys once in all', async () => {
    const relay = await start();
    const { token } = await earner(relay, 'grace', 3);
    const answers = await Promise.all(Array.from({ length: 20 }, () => withdraw(relay, token, 150)));
    const codes = answers.map((a) => (a.status === 201 ? a.body.status : a.body.code)).sort();
    expect(codes.filter((c) => c === 'paid')).toHaveLength(1);
    expect(codes.filter((c) => c === 'insufficient_balance')).toHaveLength(19);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(19);
    expect(relay.sandbox!.payments().map((p) => p.amount)).toEqual(['150000']);
    expect((await balanceOf(relay, token)).sats).toBe(0);
  });

  it('lists a player’s withdrawals however many credits came after them', async () => {
    const relay = await start();
    const { token } = await earner(relay, 'babbage', 2);
    const w = await withdraw(relay, token, 100);
    expect(w.body.status).toBe('paid');
    // A season of play after it: more credits than the relay reads of a player's history at once.
    for (let b = 0; b < 41; b++) {
      const claims = Array.from({ length: 25 }, () => ({ idempotencyKey: randomUUID(), achievementId: 'coin' }));
      expect((await call<unknown>(relay, token, 'POST', '/v1/rewards/batch', { claims })).status).toBe(200);
    }
    const list = await call<WithdrawalList>(relay, token, 'GET', '/v1/withdrawals');
    expect(list.body.withdrawals.map((x) => [x.id, x.status])).toEqual([[w.body.id, 'paid']]);
  });

  it('refuses below the minimum, past the balance and past the day’s limit as problems that change nothing and call no service', async () => {
    const relay = await start({ RELAY_WITHDRAWAL_DAILY_LIMIT_SATS: '120' });
    const { token } = await earner(relay, 'linus', 4);
    const before = await balanceOf(relay, token);
    expect(before).toMatchObject({ sats: 200, withdrawableSats: 120 });
    const refusals = [await withdraw(relay, token, 49), await withdraw(relay, token, 201), await withdraw(relay, token, 150)];
    expect(refusals.map((r) => [r.status, r.body.code])).toEqual([
      [422, 'below_minimum'],
      [409, 'insufficient_balance'],
      [409, 'over_limit'],
    ]);
    expect(refusals[0]!.headers.get('content-type')).toBe('application/problem+json');
    expect(relay.sandbox!.payments()).toHaveLength(0);
    expect(await balanceOf(relay, token)).toEqual(before);
    // With no sats named: all that is withdrawable (the day's limit), then nothing more today.
    expect((await withdraw(relay, token)).body).toMatchObject({ sats: 120, status: 'paid' });
    expect((await withdraw(relay, token)).body.code).toBe('over_limit');
    expect(await balanceOf(relay, token)).toMatchObject({ sats: 80, withdrawableSats: 0, withdrawnTodaySats: 120 });
  });

  it('restores the balance when the service refuses the payment', async () => {
    const relay = await start();
    const { token } = await earner(relay, TEST_GAMERTAGS.refused, 2);
    const w = await withdraw(relay, token, 100);
    expect(w.body).toMatchObject({ status: 'failed', reason: 'insufficient_balance' });
    expect(await balanceOf(relay, token)).toMatchObject({ sats: 100, withdrawnTodaySats: 0 });
  });

  it('holds a withdrawal above RELAY_HOLD_ABOVE_SATS, debited, until an operator approves it: then one payment', async () => {
    const relay = await start({ RELAY_HOLD_ABOVE_SATS: '100', RELAY_ADMIN_TOKEN: 'admin-token-0123456789abcdefghijklmnop' });
    const { token } = await earner(relay, 'hopper', 4);
    const w = await withdraw(relay, token, 150);
    expect(w.body.status).toBe('held');
    expect((await balanceOf(relay, token)).sats).toBe(50);
    expect(relay.sandbox!.payments()).toHaveLength(0);
    const approve = await fetch(`${relay.url}/admin/api/review/${w.body.id}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${relay.adminToken}`, 'x-operator': 'ops-ann' },
    });
    expect(approve.status).toBe(200);
    expect(relay.sandbox!.payments().map((p) => [p.gamertag, p.amount])).toEqual([['hopper', '150000']]);
    // Under the title any withdrawal's payment has, in the player's wallet as in the service's records.
    expect(relay.sandbox!.payments()[0]!.comment).toBe(`Withdrawal (rewardbus ${w.body.id})`);
    const list = await call<WithdrawalList>(relay, token, 'GET', '/v1/withdrawals');
    expect(list.body.withdrawals[0]).toMatchObject({ id: w.body.id, status: 'paid' });
    // The operator sees what the relay owes beside the wallet, and withdrawals by status.
    const auth = { authorization: `Bearer ${relay.adminToken}` };
    const summary = (await (await fetch(`${relay.url}/admin/api/summary`, { headers: auth })).json()) as { balances: Record<string, unknown> };
    expect(summary.balances).toMatchObject({ owedSats: 50, short: false });
    const metrics = await (await fetch(`${relay.url}/metrics`, { headers: auth })).text();
    expect(metrics).toMatch(/^rewardbus_balances_owed_sats 50$/m);
    expect(metrics).toMatch(/^rewardbus_withdrawals_total\{status="paid"\} 1$/m);
  });

  it('keeps a withdrawal whose answer timed out debited and in review, never sends it again, and settles it by the late answer', async () => {
    const relay = await start({ PAYMENTS_TIMEOUT_MS: '200' }, { limboMs: 600 });
    const { token } = await earner(relay, TEST_GAMERTAGS.ambiguous, 2);
    const key = randomUUID();
    const w = await withdraw(relay, token, 100, key);
    expect(w.body).toMatchObject({ status: 'needs_review', reason: 'timeout' });
    expect((await balanceOf(relay, token)).sats).toBe(0);
    // The client's retry is answered from the ledger: nothing is sent again.
    expect((await withdraw(relay, token, 100, key)).body).toEqual(w.body);
    const listed = async () => (await call<WithdrawalList>(relay, token, 'GET', '/v1/withdrawals')).body.withdrawals[0];
    await expect.poll(listed, { timeout: 3000 }).toMatchObject({ status: 'paid' });
    expect(relay.sandbox!.payments()).toHaveLength(1);
    expect((await balanceOf(relay, token)).sats).toBe(0);
  });

  it('lets a guest earn before a gamertag, and merges its credits into the player who links, once-only rules applied', async () => {
    const relay = await start();
    const made = await fetch(`${relay.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(made.status).toBe(201);
    const guest = (await made.json()) as PlayerSession;
    expect(guest).toMatchObject({ guest: true, gamertag: '' });
    expect(guest.userId).toMatch(/^guest_/);
    for (const achievementId of ['first-coin', 'coin', 'coin']) expect((await relay.claim(guest.token, { achievementId })).body.status).toBe('credited');
    expect((await balanceOf(relay, guest.token)).sats).toBe(121);
    expect((await withdraw(relay, guest.token, 100)).body.code).toBe('gamertag_required');
    expect((await relay.claim(guest.token, { achievementId: 'instant-coin' })).body.code).toBe('gamertag_required');

    // The player already earned first-coin (once only): the guest's is dropped, the coins move.
    const before = await relay.link('ada');
    expect((await relay.claim(before.token, { achievementId: 'first-coin' })).body.status).toBe('credited');
    // A stream ticket the guest took just before it links: it must stop working with the guest's token.
    const { ticket } = (await call<{ ticket: string }>(relay, guest.token, 'POST', '/v1/events/ticket')).body;
    const linked = await fetch(`${relay.url}/v1/players`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gamertag: 'ada', guestToken: guest.token }),
    });
    expect(linked.status).toBe(201);
    const session = (await linked.json()) as PlayerSession;
    expect(session.merge).toMatchObject({ guestId: guest.userId, moved: 2, movedSats: 100, dropped: [{ achievementId: 'first-coin', sats: 21, reason: 'already_claimed' }] });
    expect(await balanceOf(relay, session.token)).toMatchObject({ sats: 121 });
    // The guest's token stops working; linking with it again moves nothing.
    expect((await call(relay, guest.token, 'GET', '/v1/balance')).status).toBe(401);
    const stream = await fetch(`${relay.url}/v1/events?ticket=${encodeURIComponent(ticket)}`);
    await stream.body?.cancel();
    expect(stream.status).toBe(401);
    const again = await fetch(`${relay.url}/v1/players`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gamertag: 'ada', guestToken: guest.token }),
    });
    expect(((await again.json()) as PlayerSession).merge).toMatchObject({ moved: 0, dropped: [] });
    expect((await balanceOf(relay, session.token)).sats).toBe(121);
    expect((await withdraw(relay, session.token, 121)).body).toMatchObject({ status: 'paid', sats: 121 });
    expect(relay.sandbox!.payments().map((p) => [p.gamertag, p.amount])).toEqual([['ada', '121000']]);
  });

  it("pays a guest's refused claim of an achievement paid at once, sent again under its key once the guest linked, as the player's: once, by the player's rules", async () => {
    const relay = await start({ RELAY_USER_DAILY_CAP_SATS: '59' });
    const guest = (await (await fetch(`${relay.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as PlayerSession;
    expect((await relay.claim(guest.token, { achievementId: 'coin' })).body.status).toBe('credited');
    const occurredAt = new Date().toISOString();
    const [parked, overCap] = [randomUUID(), randomUUID()];
    for (const key of [parked, overCap]) {
      const refused = await relay.claim(guest.token, { achievementId: 'instant-coin', occurredAt }, key);
      expect([refused.status, refused.body.code]).toEqual([403, 'gamertag_required']);
    }
    // The refusals recorded nothing: the merge moves the coin, and nothing else.
    const linked = await fetch(`${relay.url}/v1/players`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gamertag: 'ada', guestToken: guest.token }),
    });
    const player = (await linked.json()) as PlayerSession;
    expect(player.merge).toMatchObject({ moved: 1, movedSats: 50, dropped: [] });
    // The same intent, the same key and body, with the player's token: decided now, paid to ada.
    const paid = await relay.claim(player.token, { achievementId: 'instant-coin', occurredAt }, parked);
    expect([paid.status, paid.body]).toMatchObject([201, { status: 'paid', sats: 5, userId: player.userId, idempotencyKey: parked }]);
    const again = await relay.claim(player.token, { achievementId: 'instant-coin', occurredAt }, parked);
    expect([again.status, again.headers.get('idempotent-replayed'), again.body.id]).toEqual([201, 'true', paid.body.id]);
    // Limits are the player's: the merged coin (50) and the gem (5) leave no room for another 5 under a 59-sat cap.
    expect((await relay.claim(player.token, { achievementId: 'instant-coin', occurredAt }, overCap)).body).toMatchObject({ status: 'rejected', reason: 'user_daily_cap' });
    expect(relay.sandbox!.payments().map((p) => [p.gamertag, p.amount])).toEqual([['ada', '5000']]);
  });

  it("moves a guest's claim committed after the guest linked (past its token check when the merge committed) to the player, told to the player", async () => {
    // The guest's claim is held at the relay, past its token check, while the guest links.
    let atRelay!: () => void;
    const claimHeld = new Promise<void>((r) => (atRelay = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const relay = await startTestRelay(
      { RELAY_CATALOG: CATALOG, RELAY_PAYOUT_MODE: 'balance', ...(await backend.env()) },
      {
        relay: {
          verifyClaim: async () => {
            atRelay();
            await released;
            return true;
          },
        },
      },
    );
    relays.push(relay);
    const guest = (await (await fetch(`${relay.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as PlayerSession;
    const claiming = relay.claim(guest.token, { achievementId: 'coin' });
    await claimHeld;
    const linked = await fetch(`${relay.url}/v1/players`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gamertag: 'ada', guestToken: guest.token }),
    });
    const session = (await linked.json()) as PlayerSession;
    expect(session.merge).toMatchObject({ moved: 0 });
    release();
    const claimed = await claiming;
    expect(claimed.body).toMatchObject({ status: 'credited', sats: 50, userId: session.userId });
    expect(await balanceOf(relay, session.token)).toMatchObject({ sats: 50 });
    // In the player's history, and heard on the player's stream.
    const history = await call<{ rewards: Array<{ id: string; status: string }> }>(relay, session.token, 'GET', '/v1/rewards');
    expect(history.body.rewards.map((r) => [r.id, r.status])).toContainEqual([claimed.body.id, 'credited']);
    expect((await readSse(relay.url, session.token, 1, '0')).map((e) => [e.event, e.data.id, e.data.userId])).toEqual([['reward', claimed.body.id, session.userId]]);
  });

  it("holds the player to its daily cap across the guests it links: what does not fit stays the guest's, reported as dropped", async () => {
    const relay = await start({ RELAY_USER_DAILY_CAP_SATS: '100' });
    const guests: PlayerSession[] = [];
    for (let g = 0; g < 2; g++) {
      const made = await fetch(`${relay.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      const guest = (await made.json()) as PlayerSession;
      for (let i = 0; i < 2; i++) expect((await relay.claim(guest.token, { achievementId: 'coin' })).body.status).toBe('credited');
      guests.push(guest);
    }
    const link = async (guest: PlayerSession) =>
      (
        (await (
          await fetch(`${relay.url}/v1/players`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ gamertag: 'ada', guestToken: guest.token }),
          })
        ).json()) as PlayerSession
      ).merge;
    expect(await link(guests[0]!)).toMatchObject({ moved: 2, movedSats: 100, dropped: [] });
    expect(await link(guests[1]!)).toMatchObject({
      moved: 0,
      dropped: [
        { sats: 50, reason: 'user_daily_cap' },
        { sats: 50, reason: 'user_daily_cap' },
      ],
    });
    const ada = await relay.link('ada');
    expect((await balanceOf(relay, ada.token)).sats).toBe(100);
    expect((await relay.claim(ada.token, { achievementId: 'coin' })).body).toMatchObject({ status: 'rejected', reason: 'user_daily_cap' });
  });

  it("renews a guest's token up to 30 days after it lapsed, as the same guest with its credits, and merges with it; never a player's, a merged guest's or one lapsed longer", async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    const relay = await start();
    const players = (body: unknown) => fetch(`${relay.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const renew = async (guestToken: string) => {
      const r = await players({ guestToken });
      return { status: r.status, body: (await r.json()) as PlayerSession & { code?: string } };
    };
    const guest = (await (await players({})).json()) as PlayerSession;
    expect((await relay.claim(guest.token, { achievementId: 'coin' })).body.status).toBe('credited');
    const old = (await (await players({})).json()) as PlayerSession;

    // Two days on, the token has lapsed (a day's life): refused as any lapsed token, renewed for the same guest.
    vi.setSystemTime(Date.now() + 2 * 86_400_000);
    expect((await call(relay, guest.token, 'GET', '/v1/balance')).status).toBe(401);
    const renewed = await renew(guest.token);
    expect(renewed.status).toBe(201);
    expect(renewed.body).toMatchObject({ userId: guest.userId, guest: true, gamertag: '' });
    expect(Date.parse(renewed.body.expiresAt)).toBeGreaterThan(Date.now());
    expect((await balanceOf(relay, renewed.body.token)).sats).toBe(50);
    expect((await relay.claim(renewed.body.token, { achievementId: 'coin' })).body.status).toBe('credited');

    // 31 days after the other guest's token lapsed, it renews nothing; a player's token never renews.
    vi.setSystemTime(Date.now() + 30 * 86_400_000);
    expect(await renew(old.token)).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    const ada = await relay.link('ada');
    expect(await renew(ada.token)).toMatchObject({ status: 400, body: { code: 'bad_request' } });

    // The renewed token lapsed too, 30 days ago: the player links with it and gets the guest's credits.
    const linked = (await (await players({ gamertag: 'ada', guestToken: renewed.body.token })).json()) as PlayerSession;
    expect(linked.merge).toMatchObject({ guestId: guest.userId, moved: 2, movedSats: 100 });
    // A merged guest is done: its tokens renew nothing.
    expect(await renew(renewed.body.token)).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(await renew(guest.token)).toMatchObject({ status: 400, body: { code: 'bad_request' } });
  });

  it("renews only the guest its token names: never a new one past the address's cap, nor for a token re-signed or changed", async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    const relay = await start({ RELAY_LINKS_PER_ADDRESS_PER_DAY: '2' });
    const players = async (body: unknown) => {
      const r = await fetch(`${relay.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as PlayerSession & { code?: string } };
    };
    const guest = (await players({})).body;
    const ada = await relay.link('ada');
    expect((await players({})).body.code).toBe('too_many_players');
    vi.setSystemTime(Date.now() + 2 * 86_400_000);
    // Lapsed, and the address at its cap again today (the guest counted on its own day): the same guest renews.
    const renewed = await players({ guestToken: guest.token });
    expect(renewed).toMatchObject({ status: 201, body: { userId: guest.userId, guest: true } });
    expect((await players({})).status).toBe(201);
    expect((await players({})).status).toBe(201);
    expect((await players({})).body.code).toBe('too_many_players');
    expect(await players({ guestToken: renewed.body.token })).toMatchObject({ status: 201, body: { userId: guest.userId } });

    // Made by anyone else: another secret's signature, another guest's id, a later expiry, or a player's token made a guest's.
    const [, payload] = guest.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const resigned = (c: Record<string, unknown>, secret: string) => {
      const p = Buffer.from(JSON.stringify(c)).toString('base64url');
      return `rb1.${p}.${createHmac('sha256', secret).update(p).digest('base64url')}`;
    };
    const signature = guest.token.split('.')[2]!;
    const changed = (c: Record<string, unknown>) => `rb1.${Buffer.from(JSON.stringify(c)).toString('base64url')}.${signature}`;
    const [, adaPayload, adaSignature] = ada.token.split('.') as [string, string, string];
    const adaClaims = JSON.parse(Buffer.from(adaPayload, 'base64url').toString()) as Record<string, unknown>;
    for (const token of [
      resigned(claims, 'a-secret-this-relay-never-had-0123456789'),
      changed({ ...claims, userId: 'guest_someone-else' }),
      changed({ ...claims, exp: Date.now() + 86_400_000 }),
      `rb1.${Buffer.from(JSON.stringify({ ...adaClaims, guest: true })).toString('base64url')}.${adaSignature}`,
      ada.token,
    ]) {
      expect(await players({ guestToken: token })).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    }
  });

  it('grows the withdrawal allowance with witnessed play and the game server’s raises', async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    const relay = await start({ RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS: '10', RELAY_WITHDRAWAL_ALLOWANCE_START_SATS: '20' });
    const { token, userId } = await earner(relay, 'turing', 4);
    expect(await balanceOf(relay, token)).toMatchObject({ sats: 200, withdrawableSats: 20 });
    // Beats 20 s apart for three minutes (a gap of more than 60 s does not count).
    for (let i = 0; i <= 9; i++) {
      expect((await call(relay, token, 'POST', '/v1/play')).status).toBe(200);
      vi.setSystemTime(Date.now() + 20_000);
    }
    vi.setSystemTime(Date.now() + 10 * 60_000);
    await call(relay, token, 'POST', '/v1/play');
    expect((await balanceOf(relay, token)).withdrawableSats).toBe(20 + 3 * 10);
    expect((await withdraw(relay, token, 60)).body.code).toBe('over_limit');

    const raise = (key: string, auth = SERVER_SECRET) =>
      fetch(`${relay.url}/v1/server/withdrawal-allowance`, {
        method: 'POST',
        headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ userId, sats: 100, reason: 'purchase' }),
      });
    expect((await raise(randomUUID(), token)).status).toBe(401);
    const key = randomUUID();
    expect((await raise(key)).status).toBe(201);
    expect((await raise(key)).headers.get('idempotent-replayed')).toBe('true');
    // The same key with another raise is no replay of it: refused, and the allowance stays as the first raise made it.
    const other = await fetch(`${relay.url}/v1/server/withdrawal-allowance`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SERVER_SECRET}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ userId, sats: 900, reason: 'purchase' }),
    });
    expect([other.status, ((await other.json()) as { code: string }).code]).toEqual([422, 'idempotency_key_reused']);
    expect((await balanceOf(relay, token)).withdrawableSats).toBe(150);
    expect((await withdraw(relay, token, 150)).body.status).toBe('paid');
    expect(await balanceOf(relay, token)).toMatchObject({ sats: 50, withdrawableSats: 0 });
  });
});

describe('instant mode', () => {
  it('offers no balance routes, and an achievement may credit a balance on its own', async () => {
    const catalog = join(dir, 'mixed.json');
    writeFileSync(catalog, JSON.stringify([...ACHIEVEMENTS, { id: 'daily', title: 'Daily', sats: 10, repeat: { kind: 'daily' }, payout: 'balance' }]));
    const plain = await startTestRelay({ RELAY_CATALOG: CATALOG });
    relays.push(plain);
    const p = await plain.link('ada');
    expect((await call(plain, p.token, 'GET', '/v1/balance')).status).toBe(404);
    const guest = await fetch(`${plain.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect([guest.status, ((await guest.json()) as { code: string }).code]).toEqual([400, 'bad_request']);

    const mixed = await startTestRelay({ RELAY_CATALOG: catalog });
    relays.push(mixed);
    const { token } = await mixed.link('ada');
    expect((await mixed.claim(token, { achievementId: 'daily' })).body.status).toBe('credited');
    expect((await mixed.claim(token, { achievementId: 'coin' })).body.status).toBe('paid');
    expect(mixed.sandbox!.payments().map((x) => x.amount)).toEqual(['50000']);
    expect((await balanceOf(mixed, token)).sats).toBe(10);
  });
});
