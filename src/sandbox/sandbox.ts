import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Hono } from 'hono';
import {
  API_KEY_HEADER,
  DESCRIPTION_MAX_LENGTH,
  type GamertagData,
  MESSAGES,
  RAMP_ERRORS,
  type SendPaymentData,
  type TransactionData,
  type UserIdData,
  type WalletData,
} from '../contract/payments-api.js';
import { fail, jsonBody, ok } from './answers.js';
import { type BtcUsdTicker, mountBtcUsd } from './btc-usd.js';
import { mountRampSessions, type RampSessionRecord, rampError } from './ramp-sessions.js';
import { mountRampWidget } from './ramp-widget.js';
import { isUnknownGamertag, TEST_GAMERTAGS } from './test-gamertags.js';
import { UserDirectory } from './users.js';
import { ProjectWallet, type SandboxPayment } from './wallet.js';
import { WithdrawalRequests } from './withdrawal-requests.js';
import { mountWithdrawalRequests } from './withdrawal-routes.js';

export interface SandboxOptions {
  /** The key callers must send in the `apikey` header. Default: a random one (read it from `sandbox.apiKey`). */
  apiKey?: string;
  /** Keys accepted besides `apiKey`, as the service accepts a second key while the first is rotated out. */
  moreApiKeys?: readonly string[];
  /** The project wallet's starting balance. Default 1,000,000 sats. */
  balanceSats?: number;
  /** How late `slowpoke`'s answers come. Default 1500 ms. */
  slowMs?: number;
  /** How late `limbo`'s (already settled) payment answer comes. Default 30 s. */
  limboMs?: number;
  /** How long a `tortoise` payment stays pending. Default 2000 ms. */
  processingMs?: number;
  /** Where the sandbox is reachable from outside, for the URLs it hands out. Default http://localhost:8788. */
  publicUrl?: string;
  /** The BTC/USD price `GET /v0/btcusd` quotes (also `POST /_sandbox/btcusd {"usd"}`). Default 65,000. */
  btcUsd?: number;
  /**
   * Signs the webhooks and withdrawal callbacks it sends (X-ZBD-Signature: sha256=<hex HMAC-SHA256
   * of the raw body>, what the relay's WEBHOOK_SECRET verifies). Unset: unsigned.
   */
  webhookSecret?: string;
  /** A JSON file that keeps its users (and their renames) across restarts. Default: memory only. */
  usersFile?: string;
  /** Where its paths start, when it is mounted inside another server (`/sandbox`). Default: at the root. */
  basePath?: string;
}

export type { RampSessionRecord };

export interface Sandbox {
  /** The web-standard handler. */
  fetch: (request: Request) => Response | Promise<Response>;
  readonly apiKey: string;
  /** Every payment made, oldest first. */
  payments(): SandboxPayment[];
  readonly balanceMsats: bigint;
  /** Sets the project wallet's balance (also `POST /_sandbox/wallet {"balanceSats"}`), to make it run low. */
  setBalanceSats(sats: number): void;
  readonly users: UserDirectory;
  readonly withdrawalRequests: WithdrawalRequests;
  readonly rampSessions: Map<string, RampSessionRecord>;
}

const DIGITS = /^[0-9]{1,18}$/;

/** An emulation of the payments service: its endpoints, shapes and errors, and test gamertags. */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const apiKey = options.apiKey ?? `sandbox_${randomUUID()}`;
  const keys = new Set([apiKey, ...(options.moreApiKeys ?? [])]);
  const keyAccepted = (given: string | undefined) => given !== undefined && keys.has(given);
  const slowMs = options.slowMs ?? 1500;
  const limboMs = options.limboMs ?? 30_000;
  const processingMs = options.processingMs ?? 2000;
  const publicUrl = (options.publicUrl ?? 'http://localhost:8788').replace(/\/$/, '');
  const users = new UserDirectory(options.usersFile);
  const wallet = new ProjectWallet(options.balanceSats ?? 1_000_000);
  const withdrawalRequests = new WithdrawalRequests();
  const btcUsd: BtcUsdTicker = { usd: options.btcUsd ?? 65_000, failWith: undefined };
  const rampSessions = new Map<string, RampSessionRecord>();
  const isSlow = (gamertag: string) => gamertag.toLowerCase() === TEST_GAMERTAGS.slow;

  // Routed under its base path as it stands: rewriting each request's URL instead cost a full copy of it.
  const app = options.basePath ? new Hono().basePath(options.basePath) : new Hono();

  app.use('/v0/*', async function requireKey(c, next) {
    if (!keyAccepted(c.req.header(API_KEY_HEADER))) return fail(c, 401, MESSAGES.invalidApiKey);
    await next();
  });
  // The ramp endpoint answers a bad key in its own envelope: the ramp client reads `error.message`.
  app.use('/api/*', async function requireRampKey(c, next) {
    if (!keyAccepted(c.req.header(API_KEY_HEADER))) return rampError(c, 401, RAMP_ERRORS.invalidApiKey, MESSAGES.invalidApiKey);
    await next();
  });

  // The project wallet: what payments are paid from (`WalletDataResponseType`, @zbd/node dist/types/wallet.d.ts).
  app.get('/v0/wallet', (c) => ok<WalletData>(c, 'Successfully retrieved Wallet.', { balance: `${wallet.balanceMsats}`, unit: 'msats' }));

  mountWithdrawalRequests(app, withdrawalRequests, wallet, options.webhookSecret);
  mountBtcUsd(app, btcUsd);

  app.get('/v0/user-id/gamertag/:gamertag', async (c) => {
    const gamertag = c.req.param('gamertag');
    if (isSlow(gamertag)) await sleep(slowMs);
    if (isUnknownGamertag(gamertag)) return fail(c, 400, MESSAGES.noUser);
    return ok<UserIdData>(c, 'Successfully retrieved User ID.', { id: users.resolve(gamertag) });
  });

  app.get('/v0/gamertag/user-id/:id', async (c) => {
    const gamertag = users.gamertagOf(c.req.param('id'));
    if (gamertag && isSlow(gamertag)) await sleep(slowMs);
    return gamertag ? ok<GamertagData>(c, 'Successfully retrieved gamertag.', { gamertag }) : fail(c, 400, 'No user found with this ID');
  });

  app.post('/v0/gamertag/send-payment', async (c) => {
    const processedAt = new Date().toISOString();
    const body = await jsonBody(c);
    if (!body) return fail(c, 400, 'Request body must be a JSON object');
    const { gamertag, amount, description } = body;
    // All three are required: the docs and @zbd/node's SendGamertagPaymentOptionsType say so.
    // A null is a field not given (see `given`): 422 as well.
    if ([gamertag, amount, description].some((v) => v === undefined || v === null)) {
      return fail(c, 422, 'Missing parameter: gamertag, amount and description are required');
    }
    if (typeof gamertag !== 'string' || gamertag === '') return fail(c, 400, 'gamertag must be a non-empty string');
    if (typeof amount !== 'string' || !DIGITS.test(amount) || BigInt(amount) < 1000n) {
      return fail(c, 400, 'amount must be a string of millisatoshis, at least 1000');
    }
    if (typeof description !== 'string' || description.length > DESCRIPTION_MAX_LENGTH) {
      return fail(c, 400, `description must be a string of at most ${DESCRIPTION_MAX_LENGTH} characters`);
    }
    if (isSlow(gamertag)) await sleep(slowMs);
    if (isUnknownGamertag(gamertag)) return fail(c, 400, MESSAGES.noUser);
    if (gamertag.toLowerCase() === TEST_GAMERTAGS.refused) return fail(c, 400, MESSAGES.insufficientBalance);

    const receiverId = users.resolve(gamertag);
    const processing = gamertag.toLowerCase() === TEST_GAMERTAGS.processing;
    const payment = wallet.pay({ receiverId, gamertag, amount, comment: description, processedAt }, processing ? Date.now() + processingMs : undefined);
    if (!payment) return fail(c, 400, MESSAGES.insufficientBalance);
    // Settled already; only the answer is late, past the caller's timeout.
    if (gamertag.toLowerCase() === TEST_GAMERTAGS.ambiguous) await sleep(limboMs);
    return ok<SendPaymentData>(c, MESSAGES.paymentSent, {
      id: payment.id,
      status: processing ? 'processing' : 'settled',
      transactionId: payment.transactionId,
      receiverId,
      amount,
      comment: description,
      settledAt: payment.settledAt,
    });
  });

  app.get('/v0/gamertag/transaction/:id', (c) => {
    const p = wallet.transaction(c.req.param('id'));
    if (!p) return fail(c, 404, 'Transaction not found');
    return ok<TransactionData>(c, 'Fetched transaction.', {
      id: p.transactionId,
      receiverId: p.receiverId,
      amount: p.amount,
      fee: '0',
      unit: 'msats',
      processedAt: p.processedAt,
      confirmedAt: p.settledAt,
      comment: p.comment,
      status: p.status,
    });
  });

  mountRampSessions(app, rampSessions, publicUrl);
  mountRampWidget(app, rampSessions, options.webhookSecret);

  // Test controls, not part of the service: what was paid, renaming a user, the wallet's balance
  // (withdrawal requests' and the BTC/USD price's are beside their endpoints).
  app.get('/_sandbox/payments', (c) => c.json({ payments: wallet.payments(), balanceMsats: `${wallet.balanceMsats}` }));
  app.post('/_sandbox/wallet', async (c) => {
    const sats = (await jsonBody(c))?.balanceSats;
    if (typeof sats !== 'number' || !Number.isSafeInteger(sats) || sats < 0) return fail(c, 400, 'balanceSats must be a whole number of sats, 0 or more');
    wallet.setBalanceSats(sats);
    return c.json({ ok: true, balanceMsats: `${wallet.balanceMsats}` });
  });
  app.post('/_sandbox/users/:id/gamertag', async (c) => {
    const body = await jsonBody(c);
    const renamed = typeof body?.gamertag === 'string' && users.rename(c.req.param('id'), body.gamertag);
    return renamed ? c.json({ ok: true }) : fail(c, 400, 'Unknown user or gamertag taken');
  });

  app.notFound((c) =>
    new URL(c.req.url).pathname.startsWith(`${options.basePath ?? ''}/api/`) ? rampError(c, 404, RAMP_ERRORS.notFound, 'Not found') : fail(c, 404, 'Not found'),
  );

  return {
    fetch: app.fetch,
    apiKey,
    payments: () => wallet.payments(),
    get balanceMsats() {
      return wallet.balanceMsats;
    },
    setBalanceSats: (sats) => wallet.setBalanceSats(sats),
    users,
    withdrawalRequests,
    rampSessions,
  };
}
