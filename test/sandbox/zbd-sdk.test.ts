import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { zbd } from '@zbd/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox, SEEDED_WITHDRAWAL_REQUEST_IDS, TEST_GAMERTAGS } from '../../src/sandbox/index.js';

let sandbox: Sandbox;
let server: ReturnType<typeof serve>;
let sdk: zbd;

beforeAll(async () => {
  sandbox = createSandbox({ processingMs: 300 });
  server = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  sdk = new zbd(sandbox.apiKey, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(() => new Promise((r) => server.close(r)));

/** Every field the SDK's type names is there, as a string, never null. */
function hasStrings(data: object, fields: string[]) {
  for (const f of fields) expect([f, typeof (data as Record<string, unknown>)[f]]).toEqual([f, 'string']);
}
const iso = (s: string) => Date.parse(s);

describe("the sandbox, read through the service's own Node SDK (@zbd/node)", () => {
  it('serves withdrawal requests with every field the SDK requires; the seeded expired one expired in the past', async () => {
    const now = Date.now();
    for (const id of SEEDED_WITHDRAWAL_REQUEST_IDS) {
      const { data, success } = await sdk.getWithdrawalRequest(id);
      expect(success).toBe(true);
      hasStrings(data, ['id', 'unit', 'amount', 'createdAt', 'internalId', 'description', 'expiresAt', 'confirmedAt', 'status']);
      // The SDK types callbackUrl as a string; the service's documentation shows null for a request
      // made without one, and the sandbox invents none (it would answer 404 and never be called).
      expect(data.callbackUrl).toBeNull();
      hasStrings(data.invoice, ['request', 'uri', 'fastRequest', 'fastUri']);
      expect(typeof (data as unknown as { fee: unknown }).fee).toBe('string');
      expect(iso(data.expiresAt)).toBeGreaterThan(iso(data.createdAt));
      if (data.status === 'expired') expect(iso(data.expiresAt)).toBeLessThan(now);
      else expect([data.status, iso(data.expiresAt) > now]).toEqual(['pending', true]);
    }
    expect((await sdk.getWithdrawalRequest(SEEDED_WITHDRAWAL_REQUEST_IDS[2])).data.status).toBe('expired');
  });

  it('pays a gamertag and reports the transaction: confirmed after it was processed', async () => {
    const sent = await sdk.sendGamertagPayment({ gamertag: 'sdk-player', amount: '21000', description: 'First coin' });
    hasStrings(sent.data, ['receiverId', 'transactionId', 'amount', 'comment']);
    const { id } = (await sdk.getUserIdByGamertag('sdk-player')).data;
    expect(sent.data.receiverId).toBe(id);
    expect((await sdk.getGamertagByUserId(id)).data.gamertag).toBe('sdk-player');

    const tx = (await sdk.getGamertagTransaction(sent.data.transactionId)).data;
    hasStrings(tx, ['id', 'amount', 'fee', 'unit', 'comment', 'status', 'confirmedAt', 'processedAt']);
    // The SDK's GamertagTransactionDataResponseType (dist/types/gamertag.d.ts) names this field
    // `receivedId`: a typo in @zbd/node 0.6.4. The service's docs and the sandbox say `receiverId`,
    // so `tx.receivedId` is the one declared field this test does not expect.
    expect((tx as unknown as { receiverId: string }).receiverId).toBe(id);
    expect(tx).not.toHaveProperty('receivedId');
    expect(tx.status).toBe('TRANSACTION_STATUS_COMPLETED');
    expect(iso(tx.confirmedAt)).toBeGreaterThanOrEqual(iso(tx.processedAt));
  });

  it('a pending transaction has no confirmation time yet (a string, never null), and gets one when it completes', async () => {
    const sent = await sdk.sendGamertagPayment({ gamertag: TEST_GAMERTAGS.processing, amount: '5000', description: 'slow' });
    const pending = (await sdk.getGamertagTransaction(sent.data.transactionId)).data;
    expect([pending.status, pending.confirmedAt]).toEqual(['TRANSACTION_STATUS_PENDING', '']);
    await expect.poll(async () => (await sdk.getGamertagTransaction(sent.data.transactionId)).data.status).toBe('TRANSACTION_STATUS_COMPLETED');
    const done = (await sdk.getGamertagTransaction(sent.data.transactionId)).data;
    expect(iso(done.confirmedAt) - iso(done.processedAt)).toBeGreaterThanOrEqual(300);
  });

  it("reads the project wallet's balance in msats; it goes down as payments are paid and can be set low for tests", async () => {
    const before = await sdk.getWallet();
    expect((before as typeof before & { success: boolean }).success).toBe(true);
    hasStrings(before, ['message']);
    hasStrings(before.data, ['balance', 'unit']);
    expect(before.data.unit).toBe('msats');
    expect(BigInt(before.data.balance)).toBe(sandbox.balanceMsats);
    await sdk.sendGamertagPayment({ gamertag: 'sdk-wallet', amount: '3000', description: 'wallet check' });
    expect((await sdk.getWallet()).data.balance).toBe(`${BigInt(before.data.balance) - 3000n}`);

    const control = await fetch(`${sdk.apiBaseUrl}/_sandbox/wallet`, { method: 'POST', body: JSON.stringify({ balanceSats: 2 }) });
    expect(await control.json()).toEqual({ ok: true, balanceMsats: '2000' });
    expect((await sdk.getWallet()).data.balance).toBe('2000');
    await expect(sdk.sendGamertagPayment({ gamertag: 'sdk-wallet', amount: '3000', description: 'too much' })).rejects.toEqual({
      status: 400,
      message: 'Insufficient balance in project wallet',
    });
    sandbox.setBalanceSats(1_000_000);
  });

  it('creates a withdrawal request with every field the SDK declares, then serves it by id', async () => {
    const before = sandbox.balanceMsats;
    const created = await sdk.createWithdrawalRequest({
      amount: '15000',
      description: 'Withdraw QR!',
      expiresIn: 300,
      internalId: '1b8h1-h1675',
      callbackUrl: 'https://example.com/zbd-callback',
    });
    expect(created.success).toBe(true);
    hasStrings(created, ['message']);
    hasStrings(created.data, ['id', 'unit', 'amount', 'createdAt', 'callbackUrl', 'internalId', 'description', 'expiresAt', 'confirmedAt', 'status', 'fee']);
    hasStrings(created.data.invoice, ['request', 'uri', 'fastRequest', 'fastUri']);
    expect(created.data).toMatchObject({
      unit: 'msats',
      amount: '15000',
      status: 'pending',
      description: 'Withdraw QR!',
      internalId: '1b8h1-h1675',
      callbackUrl: 'https://example.com/zbd-callback',
      confirmedAt: '',
    });
    expect(iso(created.data.expiresAt) - iso(created.data.createdAt)).toBe(300_000);
    expect((await sdk.getWithdrawalRequest(created.data.id)).data).toEqual(created.data);
    // Nothing leaves the wallet until the request is claimed.
    expect(sandbox.balanceMsats).toBe(before);
  });

  it('refuses a withdrawal request below 10 sats, and a payment or withdrawal request without a description', async () => {
    await expect(sdk.createWithdrawalRequest({ amount: '9999', description: 'small', expiresIn: 300, internalId: 'x', callbackUrl: 'https://example.com/cb' })).rejects.toEqual({
      status: 400,
      message: 'amount must be at least 10 sats',
    });
    // The SDK's types require a description; a JavaScript caller can still leave it out.
    const noDescription = { description: undefined as unknown as string };
    await expect(sdk.sendGamertagPayment({ gamertag: 'sdk-player', amount: '1000', ...noDescription })).rejects.toMatchObject({ status: 422 });
    await expect(sdk.createWithdrawalRequest({ amount: '15000', expiresIn: 300, internalId: 'x', callbackUrl: 'https://example.com/cb', ...noDescription })).rejects.toMatchObject({
      status: 422,
    });
  });

  it('refuses as the service does: the SDK sees the status and message', async () => {
    await expect(sdk.getUserIdByGamertag(TEST_GAMERTAGS.unknown)).rejects.toEqual({ status: 400, message: 'No user found with this gamertag' });
    await expect(new zbd('wrong-key', sdk.apiBaseUrl).getWithdrawalRequest(SEEDED_WITHDRAWAL_REQUEST_IDS[0])).rejects.toEqual({ status: 401, message: 'Invalid API key provided' });
    await expect(new zbd('wrong-key', sdk.apiBaseUrl).getWallet()).rejects.toEqual({ status: 401, message: 'Invalid API key provided' });
  });

  it('reads a withdrawal request made without callbackUrl or internalId back with null for both, nothing invented', async () => {
    // The SDK drops null fields before sending: the service sees neither.
    const made = await sdk.createWithdrawalRequest({ amount: '20000', description: 'No callback', expiresIn: 60, internalId: null, callbackUrl: null } as never);
    expect(made.data).toMatchObject({ internalId: null, callbackUrl: null, status: 'pending' });
    expect((await sdk.getWithdrawalRequest(made.data.id)).data).toMatchObject({ internalId: null, callbackUrl: null });
  });

  it('takes "" for the optional internalId and callbackUrl, which the SDK does send (it drops only null and undefined), as not given', async () => {
    const made = await sdk.createWithdrawalRequest({ amount: '20000', description: 'Empty strings', expiresIn: 60, internalId: '', callbackUrl: '' });
    expect(made.data).toMatchObject({ internalId: null, callbackUrl: null, status: 'pending' });
    expect((await sdk.getWithdrawalRequest(made.data.id)).data).toMatchObject({ internalId: null, callbackUrl: null });
    // Nothing to call when it is claimed: the pay control says so.
    const paid = await fetch(`${sdk.apiBaseUrl}/_sandbox/withdrawal-requests/${made.data.id}/pay`, { method: 'POST' });
    expect(await paid.json()).toMatchObject({ ok: true, withdrawalRequest: { status: 'completed', callbackUrl: null } });
  });

  it('quotes the BTC/USD rate in the shape getBtcUsdExchangeRate() declares; a control sets the price or makes it fail', async () => {
    const control = async (body: unknown) => {
      const r = await fetch(`${sdk.apiBaseUrl}/_sandbox/btcusd`, { method: 'POST', body: JSON.stringify(body) });
      return { status: r.status, body: await r.json() };
    };
    const first = await sdk.getBtcUsdExchangeRate();
    expect(first).toMatchObject({ success: true, data: { btcUsdPrice: '65000' } });
    hasStrings(first, ['message']);
    hasStrings(first.data, ['btcUsdPrice', 'btcUsdTimestamp']);
    expect(Math.abs(iso(first.data.btcUsdTimestamp) - Date.now())).toBeLessThan(60_000);

    expect(await control({ usd: 98765.43 })).toEqual({ status: 200, body: { ok: true, usd: 98765.43, failing: false } });
    expect((await sdk.getBtcUsdExchangeRate()).data.btcUsdPrice).toBe('98765.43');

    expect((await control({ fail: true })).status).toBe(200);
    await expect(sdk.getBtcUsdExchangeRate()).rejects.toEqual({ status: 500, message: 'Could not retrieve the BTC/USD price' });
    await control({ fail: 503 });
    await expect(sdk.getBtcUsdExchangeRate()).rejects.toMatchObject({ status: 503 });
    await control({ fail: false });
    expect((await sdk.getBtcUsdExchangeRate()).data.btcUsdPrice).toBe('98765.43');

    for (const bad of [{}, { usd: 0 }, { usd: -1 }, { usd: '65000' }, { fail: 'yes' }, { fail: 404 }]) expect((await control(bad)).status).toBe(400);
    expect((await sdk.getBtcUsdExchangeRate()).data.btcUsdPrice).toBe('98765.43');
    await expect(new zbd('wrong-key', sdk.apiBaseUrl).getBtcUsdExchangeRate()).rejects.toEqual({ status: 401, message: 'Invalid API key provided' });
  });

  it('a player claims a withdrawal request (a control): it completes once, the wallet pays it, and its callbackUrl gets the bare request', async () => {
    const received: Array<{ headers: IncomingHttpHeaders; body: unknown }> = [];
    const game = createServer((req, res) => {
      let raw = '';
      req.on('data', (d) => (raw += d));
      req.on('end', () => {
        received.push({ headers: req.headers, body: JSON.parse(raw) });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => game.listen(0, '127.0.0.1', r));
    try {
      const callbackUrl = `http://127.0.0.1:${(game.address() as AddressInfo).port}/zbd/withdrawal`;
      const made = await sdk.createWithdrawalRequest({ amount: '25000', description: 'Cash out', expiresIn: 300, internalId: 'player-7', callbackUrl });
      const before = sandbox.balanceMsats;
      const pay = (id: string) => fetch(`${sdk.apiBaseUrl}/_sandbox/withdrawal-requests/${id}/pay`, { method: 'POST' });

      const paid = await pay(made.data.id);
      expect(paid.status).toBe(200);
      const answer = (await paid.json()) as { withdrawalRequest: { confirmedAt: string }; callbackStatus: number };
      expect(answer).toMatchObject({ ok: true, callbackStatus: 200, withdrawalRequest: { id: made.data.id, status: 'completed' } });
      expect(sandbox.balanceMsats).toBe(before - 25_000n);

      const now = (await sdk.getWithdrawalRequest(made.data.id)).data;
      expect(now).toMatchObject({ status: 'completed', internalId: 'player-7', callbackUrl });
      expect(iso(now.confirmedAt)).toBeGreaterThanOrEqual(iso(now.createdAt));
      // Bare (no envelope), as upstream-facts.md documents: the request as it reads now.
      expect(received).toHaveLength(1);
      expect(received[0]!.body).toEqual(now);
      expect(received[0]!.headers['content-type']).toBe('application/json');

      // Single-use: a second claim, an expired one and an unknown one are refused, and nothing more is paid or called.
      expect((await pay(made.data.id)).status).toBe(409);
      expect((await pay(SEEDED_WITHDRAWAL_REQUEST_IDS[2])).status).toBe(409);
      expect((await pay('no-such-request')).status).toBe(404);
      expect(sandbox.balanceMsats).toBe(before - 25_000n);
      expect(received).toHaveLength(1);

      // One the wallet cannot cover stays pending.
      const big = await sdk.createWithdrawalRequest({ amount: '50000', description: 'Too big', expiresIn: 300, internalId: 'x', callbackUrl });
      sandbox.setBalanceSats(10);
      const refused = await pay(big.data.id);
      expect([refused.status, ((await refused.json()) as { message: string }).message]).toEqual([400, 'Insufficient balance in project wallet']);
      expect((await sdk.getWithdrawalRequest(big.data.id)).data.status).toBe('pending');
      expect(received).toHaveLength(1);
      sandbox.setBalanceSats(1_000_000);
    } finally {
      await new Promise((r) => game.close(r));
    }
  });
});
