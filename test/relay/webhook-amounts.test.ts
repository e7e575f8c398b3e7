// What a webhook may tell a player about money: an amount the relay has checked, in a currency's
// code, or nothing. Found by a red-team pass: a purchase's `data.amount` and `data.currency`
// reached the player's event stream as the delivery had them (any JSON, any length). The relay runs
// over real HTTP with the embedded sandbox as the service; deliveries are signed as the service's.
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { RampSession, RewardRecord } from '../../src/wire/relay-api.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';
import { readSse } from '../helpers/sse.js';

const SECRET = 'webhook-amounts-secret';
let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

async function deliver(body: unknown) {
  const raw = JSON.stringify(body);
  const signature = `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
  const r = await fetch(`${relay!.url}/v1/webhooks/payments`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-zbd-signature': signature }, body: raw });
  return { status: r.status, type: r.headers.get('content-type'), body: (await r.json()) as { code?: string; duplicate?: boolean } };
}

/** A linked player with a ramp session open: the player's token and the session's reference id. */
async function buyer() {
  relay = await startTestRelay({ WEBHOOK_SECRET: SECRET });
  const player = await relay.link('careful-buyer');
  const r = await fetch(`${relay.url}/v1/ramp-sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${player.token}` },
    body: '{"email":"b@example.com"}',
  });
  const { widgetUrl } = (await r.json()) as RampSession;
  return { token: player.token, reference_id: relay.sandbox!.rampSessions.get(widgetUrl.split('/').pop()!)!.referenceId! };
}

const webhookEvents = (reason?: string) =>
  relay!.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'webhook_refused' && (reason === undefined || l.reason === reason));

describe("a purchase webhook's amount and currency", () => {
  it('reach the player only when well formed: anything else is 400 bad_request, logged, changes nothing and is heard by no one', async () => {
    const { token, reference_id } = await buyer();
    const malformed: Array<Record<string, unknown>> = [
      { amount: '-5', currency: 'SATS' },
      { amount: -5, currency: 'SATS' },
      { amount: '1e3', currency: 'SATS' },
      { amount: ' 100', currency: 'SATS' },
      { amount: '', currency: 'SATS' },
      { amount: '9'.repeat(60_000), currency: 'SATS' },
      { amount: '1.', currency: 'BTC' },
      { amount: '.5', currency: 'BTC' },
      { amount: '0x10', currency: 'SATS' },
      { amount: { value: '1', unit: 'sats' }, currency: 'SATS' },
      { amount: ['100'], currency: 'SATS' },
      { amount: null, currency: 'SATS' },
      { amount: true, currency: 'SATS' },
      { amount: '100', currency: 'sats ' },
      { amount: '100', currency: 'btc' },
      { amount: '100', currency: '' },
      { amount: '100', currency: 'S'.repeat(10_000) },
      { amount: '100', currency: 1 },
      // A number with no unit, or a unit with no number, is not a purchase the relay can tell of.
      { amount: '100' },
      { currency: 'SATS' },
    ];
    let n = 0;
    for (const fields of malformed)
      for (const spelling of [{ type: 'ramp.purchase.completed' }, { event: 'RAMP_WIDGET.V1.PAYMENT.SETTLED' }]) {
        const id = `evt-bad-${n++}`;
        const answer = await deliver({ id, ...spelling, data: { ...fields, reference_id } });
        expect([JSON.stringify(fields).slice(0, 60), answer.status, answer.type, answer.body.code]).toEqual([
          JSON.stringify(fields).slice(0, 60),
          400,
          'application/problem+json',
          'bad_request',
        ]);
      }
    // Each refusal is in the log, for the operator: a real service's deliveries refused this way are retried and never reach the player.
    expect(webhookEvents('bad_amount')).toHaveLength(n);
    expect(webhookEvents('bad_amount')[0]).toMatchObject({ level: 40, type: 'ramp.purchase.completed', eventId: 'id:evt-bad-0' });

    // Nothing was recorded: the same event, well formed, is new, and the only thing the player hears.
    expect(await deliver({ id: 'evt-bad-0', type: 'ramp.purchase.completed', data: { amount: '5000', currency: 'SATS', reference_id, fiat_amount: '5.00' } })).toMatchObject({
      status: 200,
      body: { received: true, duplicate: false },
    });
    // A number of sats is taken as a number, 0 too.
    expect((await deliver({ id: 'evt-zero', type: 'ramp.purchase.completed', data: { amount: 0, currency: 'SATS', reference_id } })).status).toBe(200);
    // The spec names no unit, and its ramp buys BTC: a fraction of a bitcoin is a purchase as well.
    expect((await deliver({ id: 'evt-btc', event: 'RAMP_WIDGET.V1.PAYMENT.SETTLED', data: { amount: '0.00015', currency: 'BTC', reference_id } })).status).toBe(200);
    // Without an amount and a currency (a spelling that gives neither) the player hears only that it completed.
    expect((await deliver({ id: 'evt-bare', event: 'RAMP_WIDGET.V1.PAYMENT.SETTLED', data: { reference_id } })).status).toBe(200);
    const heard = await readSse(relay!.url, token, 5, '0', 1000);
    expect(heard.map((e) => [e.event, e.data])).toEqual([
      ['ramp.purchase.completed', { amount: '5000', currency: 'SATS', referenceId: reference_id }],
      ['ramp.purchase.completed', { amount: 0, currency: 'SATS', referenceId: reference_id }],
      ['ramp.purchase.completed', { amount: '0.00015', currency: 'BTC', referenceId: reference_id }],
      ['ramp.purchase.completed', { referenceId: reference_id }],
    ]);
  });

  it('of a failed purchase or another kind of event are never told, so they are not checked', async () => {
    const { token, reference_id } = await buyer();
    expect((await deliver({ id: 'evt-failed', type: 'ramp.purchase.failed', data: { reference_id, amount: '-1', currency: 'DOGE' } })).status).toBe(200);
    expect((await deliver({ id: 'evt-kyc', type: 'ramp.kyc.completed', data: { user_id: 'u1', amount: { odd: true } } })).status).toBe(200);
    const heard = await readSse(relay!.url, token, 2, '0', 1000);
    expect(heard.map((e) => [e.event, e.data])).toEqual([['ramp.purchase.failed', { referenceId: reference_id }]]);
  });
});

describe('a settlement webhook naming a payment the ledger recorded', () => {
  // The spec's webhooks are the ramp's; a reward or a withdrawal is settled from the service's
  // answer to the payment itself. So an event that names a paid reward's transaction, with
  // another amount, is recorded as a delivery and acted on by no one: the ledger's sats stand.
  it('changes neither what the ledger holds nor what the player is told, whatever its amount', async () => {
    const { token } = await buyer();
    const paid = (await relay!.claim(token, { achievementId: 'first-coin' })).body;
    expect(paid).toMatchObject({ status: 'paid', paymentId: expect.any(String) });
    for (const [i, type] of ['payment.settled', 'TRANSACTION_STATUS_COMPLETED', 'ramp.purchase.completed'].entries()) {
      const data = { id: paid.paymentId, transactionId: paid.paymentId, reference_id: paid.paymentId, amount: `${paid.sats * 1000 + 1_000_000}`, unit: 'msats', currency: 'SATS' };
      expect((await deliver({ id: `evt-settled-${i}`, type, data })).status).toBe(200);
    }
    const history = (await (await fetch(`${relay!.url}/v1/rewards`, { headers: { authorization: `Bearer ${token}` } })).json()) as { rewards: RewardRecord[] };
    expect(history.rewards).toEqual([paid]);
    const heard = await readSse(relay!.url, token, 2, '0', 1000);
    expect(heard.map((e) => [e.event, e.data.sats])).toEqual([['reward', paid.sats]]);
  });
});
