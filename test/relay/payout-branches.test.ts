// The payout branches the sandbox never takes by itself (src/relay/core/payouts.ts), each over real
// HTTP: a relay from createRelay, paying through a fake service that passes everything to the
// sandbox except what a test answers itself, in the contract's shapes (src/contract/payments-api.ts).
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerType, serve } from '@hono/node-server';
import { afterEach, describe, expect, it } from 'vitest';
import { type Envelope, MESSAGES, PATHS, type SendPaymentData, type TransactionData } from '../../src/contract/payments-api.js';
import { createLogger, createRelay, DEFAULT_CATALOG, openSqliteStore, type PlayerSession, type RelayOptions, type RelayStore, type RewardRecord } from '../../src/relay/index.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';

const API_KEY = `k_${randomUUID()}`;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function listen(fetch: (r: Request) => Response | Promise<Response>): Promise<string> {
  const server: ServerType = serve({ fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

type Answer = (request: Request, sandbox: Sandbox) => Response | undefined | Promise<Response | undefined>;

/**
 * A relay paying through the fake service. `answer` may answer a request to the service itself
 * (undefined: the sandbox answers); `store` may change the relay's store.
 */
async function start(answer: Answer, store: (s: RelayStore) => RelayStore = (s) => s, options: Partial<RelayOptions> = {}) {
  const sandbox = createSandbox({ apiKey: API_KEY });
  const serviceUrl = await listen(async (request) => (await answer(request, sandbox)) ?? sandbox.fetch(request));
  const sqlite = openSqliteStore(join(mkdtempSync(join(tmpdir(), 'rewardbus-branches-')), 'ledger.sqlite'));
  await sqlite.opened;
  const logs: Array<{ level: number; event?: string; status?: number; [k: string]: unknown }> = [];
  const logger = createLogger('debug', { write: (line: string) => void logs.push(JSON.parse(line) as (typeof logs)[number]) }, [API_KEY]);
  const relay = createRelay({
    payments: { baseUrl: serviceUrl, apiKey: API_KEY, timeoutMs: 2000, backoffMs: 10 },
    store: store(sqlite),
    secret: randomUUID(),
    rateLimitPerMinute: 0,
    logger,
    ...options,
  });
  closers.push(() => relay.close());
  await relay.ready;
  const url = await listen(relay.fetch);
  const player = (await (
    await fetch(`${url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag: 'alice' }) })
  ).json()) as PlayerSession;
  const claim = async (key = randomUUID(), achievementId = 'first-coin') => {
    const r = await fetch(`${url}/v1/rewards`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${player.token}`, 'idempotency-key': key },
      body: JSON.stringify({ achievementId }),
    });
    return { status: r.status, headers: r.headers, body: (await r.json()) as RewardRecord & { code?: string } };
  };
  const record = async (id: string) => (await (await fetch(`${url}/v1/rewards/${id}`, { headers: { authorization: `Bearer ${player.token}` } })).json()) as RewardRecord;
  const logged = (event: string) => {
    logger.flush();
    return logs.filter((l) => l.event === event);
  };
  return { relay, sandbox, player, claim, record, logged };
}

const isPayment = (r: Request) => r.method === 'POST' && new URL(r.url).pathname === PATHS.sendPayment;
const ERROR = 50; // pino's level for error

describe('a payout the service answers in an unexpected way', () => {
  it('receiver_mismatch: a payment settled to another receiverId goes to review, logged as an error, and is never sent again', async () => {
    const relay = await start(async (request, sandbox) => {
      if (!isPayment(request)) return undefined;
      const paid = await sandbox.fetch(request);
      const body = (await paid.json()) as Envelope<SendPaymentData>;
      return Response.json({ ...body, data: { ...body.data, receiverId: 'someone-else' } }, { status: paid.status });
    });
    const key = randomUUID();
    const first = await relay.claim(key);
    expect(first.status).toBe(201);
    const payment = relay.sandbox.payments()[0]!;
    expect(first.body).toMatchObject({ status: 'needs_review', reason: 'receiver_mismatch', paymentId: payment.transactionId });
    expect(relay.logged('receiver_mismatch')).toEqual([
      expect.objectContaining({ level: ERROR, rewardId: first.body.id, userId: relay.player.userId, receiverId: 'someone-else' }),
    ]);
    expect((await relay.claim(key)).body).toEqual(first.body);
    expect(await relay.record(first.body.id)).toMatchObject({ status: 'needs_review', reason: 'receiver_mismatch' });
    expect(relay.sandbox.payments()).toHaveLength(1);
  });

  it.each([401, 403])(
    'service_refused_key: a payment refused with %i is deferred (503 and Retry-After), pays nothing, logs an error, and the same key pays once the key is taken',
    async (status) => {
      let refuse = true;
      const relay = await start((request) => (refuse && isPayment(request) ? Response.json({ success: false, message: MESSAGES.invalidApiKey }, { status }) : undefined));
      const key = randomUUID();
      const refused = await relay.claim(key);
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe('service_unavailable');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(relay.sandbox.payments()).toHaveLength(0);
      expect(relay.logged('service_refused_key')).toEqual([expect.objectContaining({ level: ERROR, status })]);

      refuse = false;
      const paid = await relay.claim(key);
      expect(paid.body.status).toBe('paid');
      expect(relay.sandbox.payments()).toHaveLength(1);
    },
  );

  it('malformed_answer: a 200 to a payment without its envelope goes to review (the payment may have left), never sent again', async () => {
    const relay = await start(async (request, sandbox) => {
      if (!isPayment(request)) return undefined;
      await sandbox.fetch(request);
      return new Response('<html>upstream says hi</html>', { status: 200, headers: { 'content-type': 'text/html' } });
    });
    const key = randomUUID();
    const first = await relay.claim(key);
    expect(first.body).toMatchObject({ status: 'needs_review', reason: 'malformed_answer' });
    expect((await relay.claim(key)).body).toEqual(first.body);
    expect(relay.sandbox.payments()).toHaveLength(1);
  });

  it('malformed_answer on a lookup: nothing can have been paid, so the claim is deferred (503) and the same key pays later', async () => {
    let malformed = true;
    const relay = await start((request) =>
      malformed && request.method === 'GET' && new URL(request.url).pathname.startsWith(PATHS.gamertagByUserId('')) ? Response.json({ success: true }) : undefined,
    );
    const key = randomUUID();
    const deferred = await relay.claim(key);
    expect(deferred.status).toBe(503);
    expect(relay.sandbox.payments()).toHaveLength(0);
    malformed = false;
    expect((await relay.claim(key)).body.status).toBe('paid');
    expect(relay.sandbox.payments()).toHaveLength(1);
  });
});

describe('a redirect from the service (PAYMENTS_BASE_URL on http:// or an old host)', () => {
  const redirect = (request: Request, status: number) => {
    const to = new URL(request.url);
    to.protocol = 'https:';
    return new Response(null, { status, headers: { location: to.href } });
  };

  it.each([301, 308])('%i to the gamertag lookup: nothing was sent, so the claim is deferred (503), logged, and the same key pays once it is mended', async (status) => {
    let redirecting = true;
    const relay = await start((request) => (redirecting && new URL(request.url).pathname.startsWith(PATHS.gamertagByUserId('')) ? redirect(request, status) : undefined));
    const key = randomUUID();
    const deferred = await relay.claim(key);
    expect(deferred.status).toBe(503);
    expect(relay.sandbox.payments()).toHaveLength(0);
    expect(relay.logged('service_redirected')).toEqual([expect.objectContaining({ level: ERROR, status, call: 'gamertagByUserId' })]);
    redirecting = false;
    expect((await relay.claim(key)).body.status).toBe('paid');
    expect(relay.sandbox.payments()).toHaveLength(1);
  });

  it('303 to a payment (which may follow the payment made): review, never failed, never sent again', async () => {
    const relay = await start(async (request, sandbox) => {
      if (!isPayment(request)) return undefined;
      await sandbox.fetch(request);
      return redirect(request, 303);
    });
    const key = randomUUID();
    const first = await relay.claim(key);
    expect(first.body).toMatchObject({ status: 'needs_review', reason: 'redirected_303' });
    expect((await relay.claim(key)).body).toEqual(first.body);
    expect(relay.sandbox.payments()).toHaveLength(1);
  });
});

describe('the payment-status endpoint on a payment in review', () => {
  // The send answers a status other than settled (review, with its transaction id); the status
  // endpoint then answers `status` as each case says, until the test lets the sandbox answer.
  async function inReview(status: unknown) {
    let rewrite = true;
    const relay = await start(async (request, sandbox) => {
      const path = new URL(request.url).pathname;
      if (isPayment(request)) {
        const paid = (await (await sandbox.fetch(request)).json()) as Envelope<SendPaymentData>;
        return Response.json({ ...paid, data: { ...paid.data, status: 'processing' } });
      }
      if (!rewrite || request.method !== 'GET' || !path.startsWith(PATHS.transaction(''))) return undefined;
      const found = (await (await sandbox.fetch(request)).json()) as Envelope<TransactionData>;
      return Response.json({ ...found, data: { ...found.data, status } });
    });
    const first = await relay.claim();
    expect(first.body).toMatchObject({ status: 'needs_review', reason: 'payment_processing' });
    return { ...relay, first: first.body, answerAsTheSandbox: () => (rewrite = false) };
  }

  it.each([
    ['a status the contract does not list', 'TRANSACTION_STATUS_PROCESSING'],
    ['a lower-case spelling', 'completed'],
    ['no status at all', undefined],
  ])('%s: the payment may have left, so it stays in review (never failed, never sent again) until the service says', async (_, status) => {
    const r = await inReview(status);
    expect(await r.relay.reconcile()).toEqual({ settled: 0, open: 1 });
    expect(await r.record(r.first.id)).toMatchObject({ status: 'needs_review', reason: 'payment_processing' });
    expect(r.logged('unknown_payment_status')).toEqual([expect.objectContaining({ level: ERROR, rewardId: r.first.id, paymentId: r.first.paymentId })]);
    // The sandbox's own answer (completed) settles it: paid, once.
    r.answerAsTheSandbox();
    expect(await r.relay.reconcile()).toEqual({ settled: 1, open: 0 });
    expect(await r.record(r.first.id)).toMatchObject({ status: 'paid', paymentId: r.sandbox.payments()[0]!.transactionId });
    expect(r.sandbox.payments()).toHaveLength(1);
  });

  it('TRANSACTION_STATUS_FAILED: nothing left, so it fails', async () => {
    const r = await inReview('TRANSACTION_STATUS_FAILED');
    expect(await r.relay.reconcile()).toEqual({ settled: 1, open: 0 });
    expect(await r.record(r.first.id)).toMatchObject({ status: 'failed', reason: 'payment_failed' });
  });
});

describe('strings the service answers with are checked before the store sees them', () => {
  it('a gamertag with a NUL byte: nothing is sent, the claim fails (malformed_gamertag), logged as an error', async () => {
    const relay = await start((request) =>
      request.method === 'GET' && new URL(request.url).pathname.startsWith(PATHS.gamertagByUserId(''))
        ? Response.json({ success: true, message: 'ok', data: { gamertag: 'ali\u0000ce' } })
        : undefined,
    );
    const r = await relay.claim();
    expect(r.body).toMatchObject({ status: 'failed', reason: 'malformed_gamertag' });
    expect(relay.sandbox.payments()).toHaveLength(0);
    expect(relay.logged('malformed_answer')).toMatchObject([{ level: ERROR, call: 'gamertag' }]);
  });

  // A NUL makes a store refuse the row; a lone surrogate is stored as U+FFFD, an id the service never gave.
  it.each([
    ['a NUL byte', '\u0000'],
    ['a lone surrogate', '\ud800'],
  ])('a transaction id with %s: the payment may have left, so it goes to review, with the id logged as it came', async (_, bad) => {
    const relay = await start(async (request, sandbox) => {
      if (!isPayment(request)) return undefined;
      const paid = (await (await sandbox.fetch(request)).json()) as Envelope<SendPaymentData>;
      return Response.json({ ...paid, data: { ...paid.data, transactionId: `tx${bad}${paid.data!.transactionId}` } });
    });
    const r = await relay.claim();
    expect(r.body).toMatchObject({ status: 'needs_review', reason: 'malformed_answer' });
    expect(relay.sandbox.payments()).toHaveLength(1);
    const [line] = relay.logged('malformed_answer');
    expect(line).toMatchObject({ level: ERROR, call: 'send_payment' });
    expect(String(line!.transactionId)).toContain(relay.sandbox.payments()[0]!.transactionId);
  });
});

describe('a payout whose claim was lost', () => {
  it('lost_claim: when the ledger will not mark the intent sent (another relay took it), nothing is sent and it goes to review', async () => {
    const relay = await start(
      () => undefined,
      (s) => ({ ...s, ledger: { ...s.ledger, markSent: async () => false } }),
    );
    const first = await relay.claim();
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ status: 'needs_review', reason: 'lost_claim' });
    expect(relay.sandbox.payments()).toHaveLength(0);
  });
});

describe('the gamertag lookup before each payment', () => {
  it('is shared by payments to one player at the same moment, and never kept after it: ten claims at once, ten payments to alice', async () => {
    let lookups = 0;
    const coin = { id: 'coin', title: 'Coin', sats: 1, repeat: { kind: 'cooldown' as const, seconds: 0 } };
    const relay = await start(
      async (request) => {
        if (request.method !== 'GET' || !new URL(request.url).pathname.startsWith(PATHS.gamertagByUserId(''))) return undefined;
        lookups++;
        // Slow enough that every claim of the burst is committed while the first lookup is out.
        await new Promise((r) => setTimeout(r, 150));
        return undefined;
      },
      undefined,
      { catalog: [...DEFAULT_CATALOG, coin] },
    );
    const burst = await Promise.all(Array.from({ length: 10 }, () => relay.claim(undefined, 'coin')));
    expect(burst.map((r) => r.body.status)).toEqual(Array(10).fill('paid'));
    expect(lookups).toBeLessThanOrEqual(2);
    expect(relay.sandbox.payments().map((p) => p.receiverId)).toEqual(Array(10).fill(relay.player.userId));
    // Once the burst is paid, the next payment looks the gamertag up afresh.
    const before = lookups;
    await relay.claim(undefined, 'coin');
    expect(lookups).toBe(before + 1);
  });
});
