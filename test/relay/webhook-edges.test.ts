import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import type { RampSession } from '../../src/wire/relay-api.js';
import { freshDatabase } from '../helpers/postgres.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const postgresUrl = inject('postgresUrl');

const SECRET = 'webhook-edges-secret';
let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

const sign = (raw: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
async function deliverRaw(raw: string, headers: Record<string, string> = { 'x-zbd-signature': sign(raw) }) {
  const r = await fetch(`${relay!.url}/v1/webhooks/payments`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: raw });
  return { status: r.status, body: (await r.json()) as { duplicate?: boolean; code?: string } };
}
const deliver = (body: unknown, secret = SECRET) => deliverRaw(JSON.stringify(body), { 'x-zbd-signature': sign(JSON.stringify(body), secret) });

// A live relay whose service is never called in these tests.
const LIVE = { PAYMENTS_API_KEY: 'live-key', PAYMENTS_BASE_URL: 'http://127.0.0.1:9', RELAY_PUBLIC_URL: 'https://relay.example.com' };

describe('a webhook delivery already accepted', () => {
  it('is 200 duplicate whatever its age: the retry of a genuine delivery after the tolerance is not refused', async () => {
    relay = await startTestRelay({ WEBHOOK_SECRET: SECRET });
    const event = { id: 'evt-retried', type: 'ramp.kyc.completed', data: { user_id: 'u1' }, created_at: new Date().toISOString() };
    expect((await deliver(event)).body).toEqual({ received: true, duplicate: false });
    // The service retries the same signed delivery ten minutes later (the relay runs in this process).
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 10 * 60_000);
      expect(await deliver(event)).toEqual({ status: 200, body: { received: true, duplicate: true } });
      // A new event as old as that is still refused.
      const fresh = await deliver({ ...event, id: 'evt-new-but-old' });
      expect([fresh.status, fresh.body.code]).toEqual([400, 'stale_event']);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('webhook timestamps are a real time or a 400', () => {
  it.each([
    ['1e20', '{"created_at":1e20}'],
    ['"99999999999999999999"', '{"created_at":"99999999999999999999"}'],
    ['-8.65e15', '{"created_at":-8.65e15}'],
    ['null', '{"created_at":null}'],
    ['true', '{"created_at":true}'],
    ['{}', '{"created_at":{}}'],
    ['1e400', '{"created_at":1e400}'],
    ['[]', '{"timestamp":[]}'],
    ['"soon"', '{"createdAt":"soon"}'],
  ])('created_at %s is 400 bad_request, never a 500 or an unchecked 200', async (_name, stamp) => {
    relay ??= await startTestRelay({ WEBHOOK_SECRET: SECRET });
    const raw = `{"id":"evt-${Math.random()}","type":"ramp.kyc.completed","data":{},${stamp.slice(1)}`;
    const r = await deliverRaw(raw);
    expect([r.status, r.body.code]).toEqual([400, 'bad_request']);
  });
});

/** A relay on this store (its webhook secret set) with a player's ramp session open: the session's reference id. */
async function rampSessionOn(store: string): Promise<string> {
  const database: Record<string, string> =
    store === 'PostgreSQL' ? { RELAY_DATABASE_URL: await freshDatabase(postgresUrl, { migrated: true }), RELAY_SECRET: 'pg-relay-secret-of-at-least-32-characters' } : {};
  const r = await startTestRelay({ WEBHOOK_SECRET: SECRET, ...database });
  relay = r;
  const player = await r.link('buyer');
  const opened = await fetch(`${r.url}/v1/ramp-sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${player.token}` },
    body: '{"email":"b@example.com"}',
  });
  return r.sandbox!.rampSessions.get(((await opened.json()) as RampSession).widgetUrl.split('/').pop()!)!.referenceId!;
}

describe.each([['SQLite'], ['PostgreSQL']])('ids the database could not keep, on %s', (store) => {
  it.runIf(store === 'SQLite' || postgresUrl)('refuses a NUL byte in the id, type, reference or data, and an id over 512 characters, with 400', async () => {
    const reference_id = await rampSessionOn(store);
    for (const body of [
      { id: 'evt\u0000', type: 'ramp.kyc.completed', data: {} },
      { id: 'evt-t', type: 'ramp.kyc.completed\u0000', data: {} },
      { id: 'evt-r', type: 'ramp.purchase.completed', data: { reference_id: 'ref\u0000', amount: '1' } },
      { id: 'evt-d', type: 'ramp.purchase.completed', data: { reference_id, amount: '1\u0000', currency: 'SATS' } },
      { id: 'x'.repeat(8193), type: 'ramp.kyc.completed', data: {} },
      { type: 'ramp.purchase.completed', data: { reference_id: 'r'.repeat(513) } },
    ]) {
      const answer = await deliver(body);
      expect([JSON.stringify(body).slice(0, 60), answer.status, answer.body.code]).toEqual([JSON.stringify(body).slice(0, 60), 400, 'bad_request']);
    }
    expect((await deliver({ id: 'x'.repeat(512), type: 'ramp.kyc.completed', data: {} })).status).toBe(200);
  });

  it.runIf(store === 'SQLite' || postgresUrl)('refuses an amount nested deeper than anything the event could hold (within 64 KiB) with 400, not 500', async () => {
    const reference_id = await rampSessionOn(store);
    const raw = `{"id":"evt-deep","type":"ramp.purchase.completed","data":{"reference_id":"${reference_id}","currency":"SATS","amount":${'['.repeat(20_000)}${']'.repeat(20_000)}}}`;
    const answer = await deliverRaw(raw);
    expect([answer.status, answer.body.code]).toEqual([400, 'bad_request']);
    // An amount with any structure is no amount (test/relay/webhook-amounts.test.ts); a whole one is taken, and the relay still writes.
    const shaped = await deliver({ id: 'evt-shaped', type: 'ramp.purchase.completed', data: { reference_id, currency: 'SATS', amount: { value: '1', unit: 'sats' } } });
    expect([shaped.status, shaped.body.code]).toEqual([400, 'bad_request']);
    const whole = await deliver({ id: 'evt-shaped', type: 'ramp.purchase.completed', data: { reference_id, currency: 'SATS', amount: '1' } });
    expect(whole).toEqual({ status: 200, body: { received: true, duplicate: false } });
  });
});

describe('unsigned webhooks', () => {
  it('are refused (401) by a live relay without WEBHOOK_SECRET, which says so loudly at start', async () => {
    relay = await startTestRelay(LIVE);
    const r = await deliver({ type: 'ramp.kyc.completed', data: {} });
    expect([r.status, r.body.code]).toEqual([401, 'webhook_unauthorized']);
    expect(relay.logs.find((l) => l.includes('"event":"webhooks_refused"') && l.includes('"level":50'))).toBeDefined();
  });

  it('are taken only when explicitly allowed, with a loud warning at start', async () => {
    relay = await startTestRelay(LIVE, { relay: { webhooks: { allowUnsigned: true } } });
    expect((await deliverRaw('{"type":"ramp.kyc.completed","data":{}}', {})).status).toBe(200);
    expect(relay.logs.find((l) => l.includes('"event":"webhooks_unsigned"') && l.includes('"level":40'))).toBeDefined();
  });
});

describe('webhook secrets rotate', () => {
  it('verifies with every secret in WEBHOOK_SECRET (comma-separated); the first signs the sandbox', async () => {
    relay = await startTestRelay({ WEBHOOK_SECRET: 'new-secret,old-secret' });
    expect((await deliver({ id: 'a', type: 'ramp.kyc.completed', data: {} }, 'new-secret')).status).toBe(200);
    expect((await deliver({ id: 'b', type: 'ramp.kyc.completed', data: {} }, 'old-secret')).status).toBe(200);
    expect((await deliver({ id: 'c', type: 'ramp.kyc.completed', data: {} }, 'other-secret')).status).toBe(401);
    expect((await deliver({ id: 'd', type: 'ramp.kyc.completed', data: {} }, 'new-secret,old-secret')).status).toBe(401);
    // The embedded sandbox's own deliveries are signed with the first and taken.
    const player = await relay.link('buyer');
    const r = await fetch(`${relay.url}/v1/ramp-sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${player.token}` },
      body: '{"email":"b@example.com"}',
    });
    const session = (await r.json()) as RampSession;
    const done = (await (await fetch(`${session.widgetUrl}/complete`, { method: 'POST' })).json()) as { webhookStatus: number };
    expect(done.webhookStatus).toBe(200);
  });

  it('takes the secrets as an array too', async () => {
    relay = await startTestRelay({}, { relay: { webhooks: { secret: ['first', 'second'] } } });
    expect((await deliver({ id: 'a', type: 'ramp.kyc.completed', data: {} }, 'second')).status).toBe(200);
    expect((await deliver({ id: 'b', type: 'ramp.kyc.completed', data: {} }, 'third')).status).toBe(401);
  });
});
