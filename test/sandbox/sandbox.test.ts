import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Envelope, RampSessionData, SendPaymentData, TransactionData, UserIdData, WithdrawalRequest } from '../../src/contract/payments-api.js';
import { createSandbox, type Sandbox, SEEDED_WITHDRAWAL_REQUEST_IDS, TEST_GAMERTAGS } from '../../src/sandbox/index.js';

let sandbox: Sandbox;
let server: ServerType;
let base: string;

beforeAll(async () => {
  sandbox = createSandbox({ apiKey: 'test-key', balanceSats: 100, slowMs: 50, limboMs: 300, processingMs: 200 });
  server = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function call<T>(method: string, path: string, body?: unknown, key = 'test-key') {
  const r = await fetch(base + path, {
    method,
    headers: { apikey: key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: r.status, body: (await r.json()) as Envelope<T> & { error?: { code: string } } };
}
const pay = (gamertag: string, amount = '1000', description = 'test') => call<SendPaymentData>('POST', '/v0/gamertag/send-payment', { gamertag, amount, description });

describe('sandbox of the payments service', () => {
  it('refuses a wrong or missing apikey with 401 and the documented message', async () => {
    const r = await call('GET', '/v0/user-id/gamertag/alice', undefined, 'wrong');
    expect(r).toEqual({ status: 401, body: { success: false, message: 'Invalid API key provided' } });
  });

  it('resolves any ordinary gamertag to a stable userId, case-insensitively, and back', async () => {
    const a = await call<UserIdData>('GET', '/v0/user-id/gamertag/Alice');
    const b = await call<UserIdData>('GET', '/v0/user-id/gamertag/alice');
    expect(a.status).toBe(200);
    expect(a.body.data?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.body.data?.id).toBe(a.body.data?.id);
    const back = await call<{ gamertag: string }>('GET', `/v0/gamertag/user-id/${a.body.data?.id}`);
    expect(back.body.data?.gamertag).toBe('Alice');
  });

  it('answers 400 "No user found" for the unknown test gamertag', async () => {
    const r = await call('GET', `/v0/user-id/gamertag/${TEST_GAMERTAGS.unknown}`);
    expect(r).toEqual({ status: 400, body: { success: false, message: 'No user found with this gamertag' } });
  });

  it('pays in msats, debits the wallet, and reports the payment through the status endpoint', async () => {
    const before = sandbox.balanceMsats;
    const r = await pay('carol', '5000', 'Level complete');
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ status: 'settled', amount: '5000', comment: 'Level complete' });
    expect(sandbox.balanceMsats).toBe(before - 5000n);
    const t = await call<TransactionData>('GET', `/v0/gamertag/transaction/${r.body.data?.transactionId}`);
    expect(t.body.data).toMatchObject({ status: 'TRANSACTION_STATUS_COMPLETED', unit: 'msats', amount: '5000' });
    expect(sandbox.payments().at(-1)?.transactionId).toBe(r.body.data?.transactionId);
  });

  it('refuses bad payments without paying: missing fields (description too) 422, bad amount and long description 400', async () => {
    const n = sandbox.payments().length;
    expect((await call('POST', '/v0/gamertag/send-payment', { amount: '1000' })).status).toBe(422);
    expect((await call('POST', '/v0/gamertag/send-payment', { gamertag: 'carol', amount: '1000' })).status).toBe(422);
    expect((await pay('carol', '12.5')).status).toBe(400);
    expect((await pay('carol', '1000', 'x'.repeat(151))).status).toBe(400);
    expect((await pay(TEST_GAMERTAGS.refused)).body.message).toBe('Insufficient balance in project wallet');
    expect((await pay('carol', `${200_000_000}`)).body.message).toBe('Insufficient balance in project wallet');
    expect(sandbox.payments()).toHaveLength(n);
  });

  it('settles the ambiguous gamertag at once but answers late', async () => {
    const n = sandbox.payments().length;
    const answer = pay(TEST_GAMERTAGS.ambiguous);
    await expect.poll(() => sandbox.payments()).toHaveLength(n + 1);
    expect((await answer).status).toBe(200);
  });

  it('reports a processing payment pending, then completed', async () => {
    const r = await pay(TEST_GAMERTAGS.processing);
    expect(r.body.data?.status).toBe('processing');
    const path = `/v0/gamertag/transaction/${r.body.data?.transactionId}`;
    expect((await call<TransactionData>('GET', path)).body.data?.status).toBe('TRANSACTION_STATUS_PENDING');
    await expect.poll(async () => (await call<TransactionData>('GET', path)).body.data?.status).toBe('TRANSACTION_STATUS_COMPLETED');
  });

  it('serves seeded withdrawal requests with every field of the spec', async () => {
    const r = await call<WithdrawalRequest>('GET', `/v0/withdrawal-requests/${SEEDED_WITHDRAWAL_REQUEST_IDS[0]}`);
    expect(r.status).toBe(200);
    const wr = r.body.data!;
    expect(Object.keys(wr).sort()).toEqual([
      'amount',
      'callbackUrl',
      'confirmedAt',
      'createdAt',
      'description',
      'expiresAt',
      'fee',
      'id',
      'internalId',
      'invoice',
      'status',
      'unit',
    ]);
    expect(wr.internalId).toMatch(/^[0-9a-f]{32}$/);
    expect(wr.callbackUrl).toBeNull();
    expect(wr.invoice.uri).toBe(`lightning:${wr.invoice.request}`);
    expect(Date.parse(wr.expiresAt)).toBeGreaterThan(Date.parse(wr.createdAt));
    expect((await call('GET', '/v0/withdrawal-requests/nope')).status).toBe(404);
  });

  it('creates ramp sessions that live 15 minutes, and refuses a bad email in the ramp error shape', async () => {
    const r = await call<RampSessionData>('POST', '/api/v1/ramp-widget', { email: 'p@example.com', webhook_url: 'http://localhost/hook' });
    expect(r.status).toBe(200);
    const ttl = Date.parse(r.body.data!.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(14 * 60_000);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);
    expect(r.body).toMatchObject({ success: true, error: null, data: { session_id: expect.any(String) } });
    const bad = await call('POST', '/api/v1/ramp-widget', { email: 'nope', webhook_url: 'http://localhost/hook' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ success: false, message: expect.any(String), data: null, error: { code: 'INVALID_EMAIL', message: bad.body.message } });
  });

  it('reports the project wallet in msats, and lets a test set it', async () => {
    const wallet = () => call<{ balance: string; unit: string }>('GET', '/v0/wallet');
    expect((await wallet()).body).toEqual({ success: true, message: expect.any(String), data: { balance: `${sandbox.balanceMsats}`, unit: 'msats' } });
    const set = (balanceSats: unknown) => fetch(`${base}/_sandbox/wallet`, { method: 'POST', body: JSON.stringify({ balanceSats }) });
    const before = sandbox.balanceMsats;
    expect((await set(-1)).status).toBe(400);
    expect((await set(1.5)).status).toBe(400);
    expect(sandbox.balanceMsats).toBe(before);
    expect((await set(7)).status).toBe(200);
    expect((await wallet()).body.data?.balance).toBe('7000');
    sandbox.setBalanceSats(Number(before / 1000n));
  });

  it('answers the slow gamertag late', async () => {
    const t = Date.now();
    await call('GET', `/v0/user-id/gamertag/${TEST_GAMERTAGS.slow}`);
    expect(Date.now() - t).toBeGreaterThanOrEqual(45);
  });

  it('takes optional fields sent as null or "" (as zebedee for Python sends them) as not given, and reads them back null', async () => {
    const made = await call<WithdrawalRequest>('POST', '/v0/withdrawal-requests', { amount: '15000', description: 'py', expiresIn: null, internalId: null, callbackUrl: '' });
    expect(made.status).toBe(200);
    expect(made.body.data).toMatchObject({ internalId: null, callbackUrl: null, status: 'pending' });
    expect(Date.parse(made.body.data!.expiresAt) - Date.parse(made.body.data!.createdAt)).toBe(300_000);
    const other = await call<WithdrawalRequest>('POST', '/v0/withdrawal-requests', { amount: '15000', description: '', internalId: '', callbackUrl: null });
    expect([other.status, other.body.data?.internalId, other.body.data?.callbackUrl, other.body.data?.description]).toEqual([200, null, null, '']);
    // A field that is there but wrong is still refused; a required one sent as null is missing.
    expect((await call('POST', '/v0/withdrawal-requests', { amount: '15000', description: 'x', callbackUrl: 'not a url' })).status).toBe(400);
    expect((await call('POST', '/v0/withdrawal-requests', { amount: '15000', description: 'x', internalId: 7 })).status).toBe(400);
    expect((await call('POST', '/v0/withdrawal-requests', { amount: '15000', description: null })).status).toBe(422);
    const n = sandbox.payments().length;
    expect((await call('POST', '/v0/gamertag/send-payment', { gamertag: 'carol', amount: '1000', description: null })).status).toBe(422);
    expect((await call('POST', '/v0/gamertag/send-payment', { gamertag: null, amount: '1000', description: 'x' })).status).toBe(422);
    expect(sandbox.payments()).toHaveLength(n);

    const ramp = await call<RampSessionData>('POST', '/api/v1/ramp-widget', {
      email: 'p@example.com',
      access_token: null,
      webhook_url: '',
      destination: null,
      quote_currency: '',
      base_currency: null,
      reference_id: '',
      metadata: null,
    });
    expect(ramp.status).toBe(200);
    const kept = sandbox.rampSessions.get(ramp.body.data!.session_id)!;
    for (const k of ['webhookUrl', 'destination', 'quoteCurrency', 'baseCurrency', 'referenceId', 'metadata', 'accessToken'] as const) expect([k, kept[k]]).toEqual([k, undefined]);
    expect((await call('POST', '/api/v1/ramp-widget', { email: null, access_token: 'at_1', webhook_url: null })).status).toBe(200);
    // An e-mail or token sent empty is a wrong one, not a missing one.
    expect((await call('POST', '/api/v1/ramp-widget', { email: '' })).body.error?.code).toBe('INVALID_EMAIL');
    expect((await call('POST', '/api/v1/ramp-widget', { email: null, access_token: null })).body.error?.code).toBe('INVALID_EMAIL');
  });
});
