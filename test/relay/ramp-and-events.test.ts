import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { SEEDED_WITHDRAWAL_REQUEST_IDS } from '../../src/sandbox/index.js';
import type { RampSession, WithdrawalRequestView } from '../../src/wire/relay-api.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';
import { openSse, readSse } from '../helpers/sse.js';

const SECRET = 'webhook-test-secret';
let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

const sign = (raw: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
function deliver(body: unknown, headers: Record<string, string> = {}) {
  const raw = JSON.stringify(body);
  return fetch(`${relay!.url}/v1/webhooks/payments`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-zbd-signature': sign(raw), ...headers }, body: raw });
}

async function openRamp(token: string, body: unknown = { email: 'player@example.com' }) {
  const r = await fetch(`${relay!.url}/v1/ramp-sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as RampSession & { code?: string } };
}
const referenceOf = (widgetUrl: string) => relay!.sandbox!.rampSessions.get(widgetUrl.split('/').pop()!)!.referenceId!;

describe('webhooks from the payments service', () => {
  it('are verified: a good signature is taken, a bad or missing one refused', async () => {
    relay = await startTestRelay({ WEBHOOK_SECRET: SECRET });
    const body = { type: 'ramp.kyc.completed', data: { user_id: 'u1' } };
    expect((await deliver(body)).status).toBe(200);
    const bad = await deliver(body, { 'x-zbd-signature': sign(JSON.stringify(body), 'another-secret') });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('content-type')).toBe('application/problem+json');
    const raw = JSON.stringify(body);
    const missing = await fetch(`${relay.url}/v1/webhooks/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
    expect(missing.status).toBe(401);
    expect(relay.logs.join('')).toContain('"reason":"bad_signature"');
  });

  it('acts once on an event delivered three times, in either spelling, and reaches the player', async () => {
    relay = await startTestRelay({ WEBHOOK_SECRET: SECRET });
    const player = await relay.link('buyer');
    const { body: session } = await openRamp(player.token);
    const reference_id = referenceOf(session.widgetUrl);
    const event = { type: 'ramp.purchase.completed', data: { amount: '5000', currency: 'SATS', reference_id } };
    const answers = await Promise.all([1, 2, 3].map(() => deliver(event, { 'x-zbd-event-id': 'evt-1' })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const other = { event: 'RAMP_WIDGET.V1.PAYMENT.SETTLED', data: { amount: '7000', currency: 'SATS', reference_id }, created_at: new Date().toISOString() };
    expect((await deliver(other)).status).toBe(200);
    expect((await deliver(other)).status).toBe(200);
    // A third event would be a repeated delivery acted on twice: wait a moment for it.
    const events = await readSse(relay.url, player.token, 3, '0', 1000);
    expect(events.map((e) => [e.event, e.data.amount])).toEqual([
      ['ramp.purchase.completed', '5000'],
      ['ramp.purchase.completed', '7000'],
    ]);
  });

  it('passes a failed purchase from the widget to the player as ramp.purchase.failed', async () => {
    relay = await startTestRelay();
    const player = await relay.link('unlucky');
    const { body: session } = await openRamp(player.token);
    const declined = await fetch(`${session.widgetUrl}/fail`, { method: 'POST' });
    expect(((await declined.json()) as { webhookStatus: number }).webhookStatus).toBe(200);
    const [event] = await readSse(relay.url, player.token, 1, '0');
    expect(event).toMatchObject({ event: 'ramp.purchase.failed', data: { referenceId: referenceOf(session.widgetUrl) } });
  });
});

describe('GET /v1/events', () => {
  it('streams reward outcomes and purchases, and a reconnect with Last-Event-ID resumes where it left off', async () => {
    relay = await startTestRelay({ WEBHOOK_SECRET: SECRET });
    const player = await relay.link('streamer');
    // Last-Event-ID: 0, so the payout is heard even if it lands before the stream is open.
    const live = await openSse(relay.url, player.token);
    await relay.claim(player.token, { achievementId: 'first-coin' });
    const first = await live.until((m) => m.event === 'reward').finally(() => live.close());
    expect(first).toMatchObject({ event: 'reward', data: { achievementId: 'first-coin', status: 'paid' } });

    // While disconnected: another payout, and a purchase through the sandbox's widget.
    await relay.claim(player.token, { achievementId: 'daily-login' });
    const { body: session } = await openRamp(player.token);
    const bought = await fetch(`${session.widgetUrl}/complete`, { method: 'POST' });
    expect(((await bought.json()) as { webhookStatus: number }).webhookStatus).toBe(200);

    const resumed = await readSse(relay.url, player.token, 2, first!.id);
    expect(resumed.map((e) => e.event)).toEqual(['reward', 'ramp.purchase.completed']);
    expect(resumed[0]!.data.achievementId).toBe('daily-login');
    expect(Number(resumed[0]!.id)).toBeGreaterThan(Number(first!.id));
  });

  it('needs the player token', async () => {
    relay = await startTestRelay();
    expect((await fetch(`${relay.url}/v1/events`)).status).toBe(401);
  });
});

describe('POST /v1/ramp-sessions', () => {
  it('creates a 15-minute widget session, with the relay as webhook_url, and refuses a bad email', async () => {
    relay = await startTestRelay();
    const player = await relay.link('buyer');
    const r = await openRamp(player.token, { email: 'buyer@example.com', quoteCurrency: 'EUR', referenceId: 'order-7' });
    expect(r.status).toBe(201);
    expect(r.body.sessionToken).toBeTruthy();
    expect(r.body.widgetUrl).toContain('/widget/');
    const ttl = Date.parse(r.body.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(14 * 60_000);
    expect(relay.sandbox!.rampSessions.get(r.body.widgetUrl.split('/').pop()!)!.webhookUrl).toBe(`${relay.url}/v1/webhooks/payments`);
    const bad = await openRamp(player.token, { email: 'not-an-email' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('bad_request');
  });
});

describe('GET /v1/withdrawal-requests/{id}', () => {
  it('shows a withdrawal request for a QR code, and 404 for an unknown one', async () => {
    relay = await startTestRelay();
    const player = await relay.link('claimer');
    const get = (id: string) => fetch(`${relay!.url}/v1/withdrawal-requests/${id}`, { headers: { authorization: `Bearer ${player.token}` } });
    const r = await get(SEEDED_WITHDRAWAL_REQUEST_IDS[0]);
    const w = (await r.json()) as WithdrawalRequestView;
    expect(w).toMatchObject({ id: SEEDED_WITHDRAWAL_REQUEST_IDS[0], amountSats: 100, status: 'pending' });
    expect(w.uri).toBe(`lightning:${w.lnurl}`);
    expect((await get('00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });
});
