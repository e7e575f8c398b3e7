import { serve } from '@hono/node-server';
import { zbd } from '@zbd/node';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, SEEDED_WITHDRAWAL_REQUEST_IDS, TEST_GAMERTAGS, type Sandbox } from '../../src/sandbox/index.js';

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
      hasStrings(data, ['id', 'unit', 'amount', 'createdAt', 'callbackUrl', 'internalId', 'description', 'expiresAt', 'confirmedAt', 'status']);
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
    expect(tx.status).toBe('TRANSACTION_STATUS_COMPLETED');
    expect(iso(tx.confirmedAt)).toBeGreaterThanOrEqual(iso(tx.processedAt));
  });

  it('a pending transaction has no confirmation time yet (a string, never null), and gets one when it completes', async () => {
    const sent = await sdk.sendGamertagPayment({ gamertag: TEST_GAMERTAGS.processing, amount: '5000', description: 'slow' });
    const pending = (await sdk.getGamertagTransaction(sent.data.transactionId)).data;
    expect([pending.status, pending.confirmedAt]).toEqual(['TRANSACTION_STATUS_PENDING', '']);
    await new Promise((r) => setTimeout(r, 350));
    const done = (await sdk.getGamertagTransaction(sent.data.transactionId)).data;
    expect(done.status).toBe('TRANSACTION_STATUS_COMPLETED');
    expect(iso(done.confirmedAt) - iso(done.processedAt)).toBeGreaterThanOrEqual(300);
  });

  it('refuses as the service does: the SDK sees the status and message', async () => {
    await expect(sdk.getUserIdByGamertag(TEST_GAMERTAGS.unknown)).rejects.toEqual({ status: 400, message: 'No user found with this gamertag' });
    await expect(new zbd('wrong-key', sdk.apiBaseUrl).getWithdrawalRequest(SEEDED_WITHDRAWAL_REQUEST_IDS[0])).rejects.toEqual({ status: 401, message: 'Invalid API key provided' });
  });
});
