import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_GAMERTAGS } from '../../src/sandbox/index.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

describe('POST /v1/rewards', () => {
  it('pays a catalog achievement end to end, in msats, and records it in the player history', async () => {
    relay = await startTestRelay();
    const player = await relay.link('alice');
    const r = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ achievementId: 'first-coin', userId: player.userId, sats: 21, status: 'paid' });
    const payments = relay.sandbox!.payments();
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({ receiverId: player.userId, amount: '21000', transactionId: r.body.paymentId });

    const history = await fetch(`${relay.url}/v1/rewards`, { headers: { authorization: `Bearer ${player.token}` } });
    expect(((await history.json()) as { rewards: unknown[] }).rewards).toEqual([r.body]);
    const one = await fetch(`${relay.url}/v1/rewards/${r.body.id}`, { headers: { authorization: `Bearer ${player.token}` } });
    expect(await one.json()).toEqual(r.body);
  });

  it('does not show one player another player’s reward', async () => {
    relay = await startTestRelay();
    const alice = await relay.link('alice');
    const bob = await relay.link('bob');
    const r = await relay.claim(alice.token, { achievementId: 'first-coin' });
    const peek = await fetch(`${relay.url}/v1/rewards/${r.body.id}`, { headers: { authorization: `Bearer ${bob.token}` } });
    expect(peek.status).toBe(404);
  });

  it('answers 404 problem+json for an unknown gamertag', async () => {
    relay = await startTestRelay();
    const r = await fetch(`${relay.url}/v1/players`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gamertag: TEST_GAMERTAGS.unknown }),
    });
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(await r.json()).toMatchObject({ code: 'unknown_gamertag', status: 404 });
  });

  it('records a payment the service refuses as failed, pays nothing, and frees the reservation', async () => {
    relay = await startTestRelay({ RELAY_USER_DAILY_CAP_SATS: '21' });
    const player = await relay.link(TEST_GAMERTAGS.refused);
    const r = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(r.body).toMatchObject({ status: 'failed', reason: 'insufficient_balance' });
    expect(relay.sandbox!.payments()).toHaveLength(0);
    // A failed intent holds no reservation: a fresh claim is checked afresh, not refused by the cap.
    const again = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(again.body).toMatchObject({ status: 'failed', reason: 'insufficient_balance' });
  });

  it('pays the same Idempotency-Key sent 20 times at once exactly once', async () => {
    relay = await startTestRelay();
    const player = await relay.link('alice');
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 20 }, () => relay!.claim(player.token, { achievementId: 'first-coin' }, key)));
    expect(relay.sandbox!.payments()).toHaveLength(1);
    const created = answers.filter((a) => a.status === 201 && !a.headers.get('idempotent-replayed'));
    expect(created).toHaveLength(1);
    for (const a of answers) {
      if (a.status === 409) expect(a.body.code).toBe('request_in_flight');
      else expect(a.body).toMatchObject({ id: created[0]!.body.id, status: 'paid' });
    }
    const replay = await relay.claim(player.token, { achievementId: 'first-coin' }, key);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(created[0]!.body);
  });

  it('answers 422 to a reused Idempotency-Key with another body, and pays nothing more', async () => {
    relay = await startTestRelay();
    const player = await relay.link('alice');
    const key = randomUUID();
    await relay.claim(player.token, { achievementId: 'first-coin' }, key);
    const r = await relay.claim(player.token, { achievementId: 'daily-login' }, key);
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('idempotency_key_reused');
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it('enforces repeat policies by userId, even after the player changes gamertag', async () => {
    relay = await startTestRelay();
    const player = await relay.link('alice');
    expect((await relay.claim(player.token, { achievementId: 'first-coin' })).body.status).toBe('paid');
    expect((await relay.claim(player.token, { achievementId: 'first-coin' })).body).toMatchObject({ status: 'rejected', reason: 'already_claimed' });
    expect((await relay.claim(player.token, { achievementId: 'daily-login' })).body.status).toBe('paid');
    expect((await relay.claim(player.token, { achievementId: 'daily-login' })).body).toMatchObject({ status: 'rejected', reason: 'already_claimed_today' });
    expect((await relay.claim(player.token, { achievementId: 'coin-streak' })).body.status).toBe('paid');
    expect((await relay.claim(player.token, { achievementId: 'coin-streak' })).body).toMatchObject({ status: 'rejected', reason: 'cooldown' });

    const renamed = await fetch(`${relay.url}/sandbox/_sandbox/users/${player.userId}/gamertag`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ gamertag: 'alice2' }),
    });
    expect(renamed.status).toBe(200);
    const relinked = await relay.link('alice2');
    expect(relinked.userId).toBe(player.userId);
    expect((await relay.claim(relinked.token, { achievementId: 'first-coin' })).body).toMatchObject({ reason: 'already_claimed' });
    expect(relay.sandbox!.payments()).toHaveLength(3);
  });

  it('keeps a player within the daily cap', async () => {
    relay = await startTestRelay({ RELAY_USER_DAILY_CAP_SATS: '30' });
    const player = await relay.link('alice');
    expect((await relay.claim(player.token, { achievementId: 'first-coin' })).body.status).toBe('paid');
    expect((await relay.claim(player.token, { achievementId: 'daily-login' })).body).toMatchObject({ status: 'rejected', reason: 'user_daily_cap' });
    const other = await relay.link('bob');
    expect((await relay.claim(other.token, { achievementId: 'daily-login' })).body.status).toBe('paid');
  });

  it('never pays past the daily budget under 200 concurrent claims', async () => {
    relay = await startTestRelay({ RELAY_DAILY_BUDGET_SATS: '1000' });
    const players = await Promise.all(Array.from({ length: 100 }, (_, i) => relay!.link(`player${i}`)));
    const answers = await Promise.all(players.flatMap((p) => [relay!.claim(p.token, { achievementId: 'first-coin' }), relay!.claim(p.token, { achievementId: 'coin-streak' })]));
    const paid = answers.filter((a) => a.body.status === 'paid');
    const paidSats = paid.reduce((s, a) => s + a.body.sats, 0);
    expect(paidSats).toBeLessThanOrEqual(1000);
    expect(paidSats).toBeGreaterThan(1000 - 21);
    expect(answers.filter((a) => a.body.reason === 'daily_budget').length).toBe(200 - paid.length);
    const msats = relay.sandbox!.payments().reduce((s, p) => s + BigInt(p.amount), 0n);
    expect(msats).toBe(BigInt(paidSats) * 1000n);
  });

  it('lets a game refuse a claim with verifyClaim, recorded with its reason and unpaid', async () => {
    relay = await startTestRelay({}, { relay: { verifyClaim: (claim) => (claim.achievementId === 'daily-login' ? 'level_not_finished' : true) } });
    const player = await relay.link('alice');
    expect((await relay.claim(player.token, { achievementId: 'daily-login' })).body).toMatchObject({ status: 'rejected', reason: 'level_not_finished' });
    expect((await relay.claim(player.token, { achievementId: 'first-coin' })).body.status).toBe('paid');
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });
});

describe('a restarted relay', () => {
  it('keeps its ledger and refuses a second claim of a once-only achievement', async () => {
    relay = await startTestRelay();
    const player = await relay.link('alice');
    const key = randomUUID();
    const first = await relay.claim(player.token, { achievementId: 'first-coin' }, key);
    expect(first.body.status).toBe('paid');
    relay = await relay.restart();
    // The token survives too: the secret is kept in the data dir.
    const replay = await relay.claim(player.token, { achievementId: 'first-coin' }, key);
    expect(replay.body).toEqual(first.body);
    expect((await relay.claim(player.token, { achievementId: 'first-coin' })).body).toMatchObject({ status: 'rejected', reason: 'already_claimed' });
    expect(relay.sandbox!.payments()).toHaveLength(0);
  });
});
