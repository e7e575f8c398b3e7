import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletBalance } from '../../src/relay/ops/wallet-balance.js';
import { createPaymentsClient } from '../../src/relay/payments/client.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';

let sandbox: Sandbox;
let server: ServerType;
let baseUrl: string;

beforeAll(async () => {
  sandbox = createSandbox({ apiKey: 'client-key', balanceSats: 5000 });
  server = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const client = (apiKey = 'client-key') => createPaymentsClient({ baseUrl, apiKey, attempts: 1 });

describe("the relay's payments client against the sandbox: the wallet and the ramp envelope", () => {
  it('reads the wallet balance in whole sats, lower after a payment', async () => {
    const payments = client();
    expect(await payments.wallet()).toEqual({ kind: 'ok', data: 5000 });
    await payments.sendPayment({ gamertag: 'wallet-reader', amount: '21000', description: 'reward' });
    expect(await payments.wallet()).toEqual({ kind: 'ok', data: 4979 });
    payments.close();
  });

  it('a wrong key is a refusal with the service message', async () => {
    const payments = client('wrong');
    expect(await payments.wallet()).toEqual({ kind: 'refused', status: 401, message: 'Invalid API key provided' });
    payments.close();
  });

  it('feeds the cached reader: a wallet set low for the test reads low', async () => {
    const payments = client();
    sandbox.setBalanceSats(10);
    const wallet = createWalletBalance(payments, { lowSats: 100 });
    expect(await wallet.read()).toMatchObject({ balanceSats: 10, low: true });
    sandbox.setBalanceSats(5000);
    payments.close();
  });

  it('still gets what the ramp route reads from the new ramp envelope, success and refusal', async () => {
    const payments = client();
    const ok = await payments.rampWidget({ email: 'p@example.com', webhook_url: 'http://localhost/hook', reference_id: 'rb_1' });
    expect(ok).toMatchObject({
      kind: 'ok',
      data: { session_token: expect.any(String), widget_url: expect.any(String), session_id: expect.any(String), expires_at: expect.any(String) },
    });
    expect(await payments.rampWidget({ email: 'nope', webhook_url: 'http://localhost/hook' })).toEqual({
      kind: 'refused',
      status: 400,
      code: 'INVALID_EMAIL',
      message: 'A valid email (or an access_token) is required',
    });
    const badKey = client('wrong');
    expect(await badKey.rampWidget({ email: 'p@example.com', webhook_url: 'http://localhost/hook' })).toEqual({
      kind: 'refused',
      status: 401,
      code: 'INVALID_API_KEY',
      message: 'Invalid API key provided',
    });
    payments.close();
    badKey.close();
  });
});
