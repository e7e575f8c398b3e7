import http from 'node:http';
import https from 'node:https';
import type { Logger } from 'pino';
import {
  API_KEY_HEADER,
  type BtcUsdData,
  type GamertagData,
  PATHS,
  type RampSessionData,
  type RampWidgetBody,
  type SendPaymentBody,
  type SendPaymentData,
  satsFromMsats,
  type TransactionData,
  type UserIdData,
  type WalletData,
  type WithdrawalRequest,
} from '../../contract/payments-api.js';
import { scrub } from '../scrub.js';

/** A call's time limit when none is given: PAYMENTS_TIMEOUT_MS's default (the settings' schema reads it here). */
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface PaymentsClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Per call. A send-payment that times out is unclear, never resent. Default 10 s. */
  timeoutMs?: number;
  /** Keep-alive sockets to the service. Default 128. */
  maxSockets?: number;
  /** Attempts where no payment can have happened (refused connection, 429). Default 3. */
  attempts?: number;
  /** First backoff; doubles each attempt unless the service sends Retry-After. Default 200 ms. */
  backoffMs?: number;
  /** After a timeout, how long a sent payment's answer is still awaited, to settle it by. Default 60 s. */
  lateAnswerMs?: number;
  /** Where a refused key is said: `service_refused_key`, once per refused call. */
  logger?: Pick<Logger, 'error'>;
}

/** What a call to the service came to. `unclear`: it may have acted; only a status check can tell. */
export type Outcome<T> =
  | { kind: 'ok'; data: T }
  | { kind: 'refused'; status: number; message: string; code?: string }
  | { kind: 'unavailable'; reason: string }
  /** `late`: after a timeout, the answer if it still comes (within `lateAnswerMs`), to settle by. */
  | { kind: 'unclear'; reason: string; late?: Promise<Outcome<T>> };

export interface PaymentsClient {
  sendPayment(body: SendPaymentBody): Promise<Outcome<SendPaymentData>>;
  userIdByGamertag(gamertag: string): Promise<Outcome<UserIdData>>;
  gamertagByUserId(userId: string): Promise<Outcome<GamertagData>>;
  transaction(transactionId: string): Promise<Outcome<TransactionData>>;
  withdrawalRequest(id: string): Promise<Outcome<WithdrawalRequest>>;
  rampWidget(body: RampWidgetBody): Promise<Outcome<RampSessionData>>;
  /**
   * The project wallet's balance, in whole sats (`GET /v0/wallet`): for the operator, read through
   * ops/wallet-balance.ts (cached), never on a payout's path.
   */
  wallet(): Promise<Outcome<number>>;
  /** The BTC/USD price, dollars per bitcoin (`GET /v0/btcusd`): for the price holder (core/prices.ts), in the background, never on a payout's path. */
  btcUsd(): Promise<Outcome<number>>;
  close(): void;
}

type Answer = { status: number; body: unknown; retryAfterMs?: number; location?: string };
// `connect`: nothing reached the service. `sent`: the request may have been acted on; `late`
// is its answer should it still come after a timeout.
type TransportFailure = { failed: 'connect' | 'sent'; reason: string; late?: Promise<Answer | TransportFailure> };

const NOTHING_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The relay's client for the payments service, over node:http with a keep-alive agent
 * (on Node 20 the global fetch managed about a tenth of its throughput here).
 */
export function createPaymentsClient(options: PaymentsClientOptions): PaymentsClient {
  const base = new URL(options.baseUrl.replace(/\/?$/, '/'));
  const lib = base.protocol === 'https:' ? https : http;
  const agent = new lib.Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 128 });
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const attempts = options.attempts ?? 3;
  const backoffMs = options.backoffMs ?? 200;
  const lateAnswerMs = options.lateAnswerMs ?? 60_000;
  const basePath = base.pathname.replace(/\/$/, '');

  function once(method: 'GET' | 'POST', path: string, body: unknown, listenLate: boolean): Promise<Answer | TransportFailure> {
    return new Promise((resolve) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = lib.request(
        {
          method,
          agent,
          hostname: base.hostname,
          port: base.port,
          path: basePath + path,
          headers: {
            [API_KEY_HEADER]: options.apiKey,
            accept: 'application/json',
            ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', () => settle({ failed: 'sent', reason: 'response_aborted' }));
          res.on('end', () => {
            let parsed: unknown;
            try {
              parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
              parsed = undefined;
            }
            const retryAfter = Number(res.headers['retry-after']);
            const location = res.headers.location;
            settle({
              status: res.statusCode ?? 0,
              body: parsed,
              ...(retryAfter >= 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
              ...(location ? { location } : {}),
            });
          });
        },
      );
      // Until the whole request is written, the service cannot have acted on it: a failure before
      // then (refused, reset, timed out) is known to have paid nothing.
      let written = false;
      req.on('finish', () => (written = true));
      // Past the timeout the caller is told "unclear"; a sent request is still listened to for a
      // while, since its late answer settles what would otherwise wait for an operator.
      let late: ((r: Answer | TransportFailure) => void) | undefined;
      const timer = setTimeout(() => {
        if (!written || !listenLate) {
          settle({ failed: written ? 'sent' : 'connect', reason: 'timeout' });
          return void req.destroy();
        }
        const lateAnswer = new Promise<Answer | TransportFailure>((r) => (late = r));
        settle({ failed: 'sent', reason: 'timeout', late: lateAnswer });
        const giveUp = setTimeout(() => {
          late?.({ failed: 'sent', reason: 'timeout' });
          req.destroy();
        }, lateAnswerMs);
        giveUp.unref();
      }, timeoutMs);
      let done = false;
      function settle(r: Answer | TransportFailure) {
        if (done) {
          late?.(r);
          late = undefined;
          return;
        }
        done = true;
        clearTimeout(timer);
        resolve(r);
      }
      req.on('error', (err: NodeJS.ErrnoException) =>
        settle({ failed: !written || (err.code && NOTHING_SENT.has(err.code)) ? 'connect' : 'sent', reason: err.code ?? 'network_error' }),
      );
      req.end(payload);
    });
  }

  /** What a late answer to a sent request comes to (no retry: it was sent once). */
  async function lateOutcome<T>(late: Promise<Answer | TransportFailure>): Promise<Outcome<T>> {
    const r = await late;
    if ('failed' in r) return { kind: 'unclear', reason: r.reason };
    const env = r.body as { success?: boolean; data?: T } | undefined;
    if (r.status >= 200 && r.status < 300 && env?.success === true && env.data !== undefined) return { kind: 'ok', data: env.data };
    if (r.status >= 400 && r.status < 500 && r.status !== 429) return refusal(r, options.apiKey);
    return { kind: 'unclear', reason: `late_${r.status}` };
  }

  /** Calls the service, retrying only what is safe to retry, and unwraps the envelope. */
  async function call<T>(name: string, method: 'GET' | 'POST', path: string, body: unknown, idempotent: boolean): Promise<Outcome<T>> {
    let last: Outcome<T> = { kind: 'unavailable', reason: 'not_attempted' };
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const r = await once(method, path, body, !idempotent);
      let waitMs = backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random());
      if ('failed' in r) {
        if (r.failed === 'sent' && !idempotent) return { kind: 'unclear', reason: r.reason, ...(r.late ? { late: lateOutcome<T>(r.late) } : {}) };
        last = { kind: 'unavailable', reason: r.reason };
      } else if (r.status >= 200 && r.status < 300) {
        const env = r.body as { success?: boolean; data?: T } | undefined;
        if (env?.success === true && env.data !== undefined) return { kind: 'ok', data: env.data };
        if (!idempotent) return { kind: 'unclear', reason: 'malformed_answer' };
        last = { kind: 'unavailable', reason: 'malformed_answer' };
      } else if (r.status >= 300 && r.status < 400) {
        // Not followed, and no refusal: the address is wrong (http:// for https://, an old host), or,
        // after a send, a 303 may point at the payment it made. Asking again changes nothing.
        options.logger?.error(
          { event: 'service_redirected', call: name, status: r.status, location: r.location ? scrub(r.location, [options.apiKey]).slice(0, 300) : undefined },
          'the payments service answered a redirect: check PAYMENTS_BASE_URL (the https:// address the redirect names), then restart',
        );
        return idempotent ? { kind: 'unavailable', reason: `redirected_${r.status}` } : { kind: 'unclear', reason: `redirected_${r.status}` };
      } else if (r.status === 429) {
        last = { kind: 'unavailable', reason: 'rate_limited' };
        if (r.retryAfterMs !== undefined) waitMs = Math.max(waitMs, r.retryAfterMs);
      } else if (r.status >= 500) {
        // A 5xx after a send is no proof that nothing was paid.
        if (!idempotent) return { kind: 'unclear', reason: `service_error_${r.status}` };
        last = { kind: 'unavailable', reason: `service_error_${r.status}` };
      } else {
        const refused = refusal(r, options.apiKey);
        if (r.status === 401 || r.status === 403) {
          options.logger?.error(
            { event: 'service_refused_key', call: name, status: r.status, message: refused.kind === 'refused' ? refused.message : undefined },
            'the payments service refused the API key: check PAYMENTS_API_KEY (and PAYMENTS_BASE_URL), then restart',
          );
        }
        return refused;
      }
      if (attempt < attempts) await sleep(waitMs);
    }
    return last;
  }

  return {
    sendPayment: (body) => call('sendPayment', 'POST', PATHS.sendPayment, body, false),
    userIdByGamertag: (gamertag) => call('userIdByGamertag', 'GET', PATHS.userIdByGamertag(gamertag), undefined, true),
    gamertagByUserId: (userId) => call('gamertagByUserId', 'GET', PATHS.gamertagByUserId(userId), undefined, true),
    transaction: (id) => call('transaction', 'GET', PATHS.transaction(id), undefined, true),
    withdrawalRequest: (id) => call('withdrawalRequest', 'GET', PATHS.withdrawalRequest(id), undefined, true),
    // A second session is harmless: creating one is safe to retry.
    rampWidget: (body) => call('rampWidget', 'POST', PATHS.rampWidget, body, true),
    wallet: async () => {
      const r = await call<WalletData>('wallet', 'GET', PATHS.wallet, undefined, true);
      if (r.kind === 'refused' || r.kind === 'unavailable') return r;
      // A read acts on nothing: never `unclear` (idempotent calls are not), but the type allows it.
      if (r.kind === 'unclear') return { kind: 'unavailable', reason: r.reason };
      // Millisatoshis as a string of digits; a part-sat remainder is not spendable as a reward.
      const { balance, unit } = r.data;
      if (unit !== 'msats' || typeof balance !== 'string' || !/^[0-9]{1,21}$/.test(balance)) return { kind: 'unavailable', reason: 'malformed_answer' };
      return { kind: 'ok', data: satsFromMsats(balance) };
    },
    btcUsd: async () => {
      const r = await call<BtcUsdData>('btcUsd', 'GET', PATHS.btcUsd, undefined, true);
      if (r.kind === 'refused' || r.kind === 'unavailable') return r;
      if (r.kind === 'unclear') return { kind: 'unavailable', reason: r.reason };
      // A decimal string of dollars; anything else (or a price of 0) is no price.
      const price = typeof r.data.btcUsdPrice === 'string' && /^[0-9]{1,12}(\.[0-9]+)?$/.test(r.data.btcUsdPrice) ? Number(r.data.btcUsdPrice) : Number.NaN;
      return price > 0 ? { kind: 'ok', data: price } : { kind: 'unavailable', reason: 'malformed_answer' };
    },
    close: () => agent.destroy(),
  };
}

/** A refusal, its message scrubbed: the service's text could quote the key it was sent. */
function refusal(r: Answer, apiKey: string): Outcome<never> {
  const b = r.body as { message?: unknown; error?: { code?: unknown; message?: unknown } } | undefined;
  const text = typeof b?.message === 'string' ? b.message : typeof b?.error?.message === 'string' ? b.error.message : `HTTP ${r.status}`;
  const message = scrub(text, [apiKey]);
  const code = typeof b?.error?.code === 'string' ? b.error.code : undefined;
  return { kind: 'refused', status: r.status, message, ...(code ? { code } : {}) };
}
