import { type Context, Hono } from 'hono';
import type { Logger } from 'pino';
import type { CatalogResponse, Health } from '../../wire/relay-api.js';
import type { Claims } from '../core/claims.js';
import type { EventHub } from '../core/live-events.js';
import type { PlayerTokens } from '../core/player-tokens.js';
import type { ClaimLimits } from '../core/ports/ledger.js';
import { isStoreOutage } from '../core/ports/outage.js';
import type { RelayStore } from '../core/ports/relay-store.js';
import type { Reviews } from '../core/reviews.js';
import type { StreamTickets } from '../core/stream-tickets.js';
import type { Metrics } from '../ops/metrics.js';
import { createReadiness } from '../ops/readiness.js';
import type { WalletBalance } from '../ops/wallet-balance.js';
import type { Outcome, PaymentsClient } from '../payments/client.js';
import { DEFAULTS } from '../settings/schema.js';
import { VERSION } from '../version.js';
import { ADMIN_PAGE_CSP, adminAssets } from './admin/assets.js';
import { addressKey, clientAddress } from './client-address.js';
import { type RelayEnv, requirePlayer, socketAddress } from './context.js';
import { requireAdmin } from './middleware/admin-auth.js';
import { allowedMethods } from './middleware/allowed-methods.js';
import { cors, originAllowed } from './middleware/cors.js';
import { refuseNulInUrl } from './middleware/nul-guard.js';
import type { RateLimiter } from './middleware/rate-limit.js';
import type { HttpOptions } from './options.js';
import { problemResponse, RelayProblem } from './problems.js';
import { adminApi } from './routes/admin.js';
import { eventsRoute } from './routes/events.js';
import { playersRoute } from './routes/players.js';
import { rampRoute } from './routes/ramp.js';
import { readyRoute } from './routes/ready.js';
import { rewardsRoute } from './routes/rewards.js';
import { webhooksRoute } from './routes/webhooks.js';
import { withdrawalsRoute } from './routes/withdrawals.js';
import { SECURITY_HEADERS } from './security-headers.js';
import { createStreamCaps } from './stream-caps.js';

const NO_GAUGE = { inc: () => undefined, dec: () => undefined };

/** What the HTTP side is made of: the relay's options, and the core and stores built from them. */
export interface AppDeps {
  options: HttpOptions;
  store: RelayStore;
  payments: PaymentsClient;
  /** A cheap call to the service, for readiness. */
  serviceCheck: () => Promise<Outcome<number>>;
  /** True once the relay began to stop: readiness says no at once. */
  draining: () => boolean;
  tokens: PlayerTokens;
  /** Single-use tickets for the event stream (signed with the player-token secret). */
  tickets: StreamTickets;
  limiter: RateLimiter;
  webhookLimiter: RateLimiter;
  catalogBody: CatalogResponse;
  claim: Claims;
  hub: EventHub;
  limits: ClaimLimits;
  logger: Logger;
  /** Present with the operator's surface (an admin token). */
  metrics?: Metrics;
  wallet: WalletBalance;
  decide: Reviews;
}

/**
 * The relay's HTTP surface as a web-standard handler: middleware one concern each, then thin
 * routes that parse, call the core and answer. The operator's surface exists only with a token.
 */
export function createApp(d: AppDeps) {
  const { options, store, payments, tokens, limiter, logger, metrics } = d;
  const { ledger, events } = store;
  const origins = options.allowedOrigins ?? [];
  const trustProxy = options.trustProxy;
  const maxBodyBytes = options.maxBodyBytes ?? 4096;
  const app = new Hono<RelayEnv>();

  const unknownAddress = warnOfUnknownAddresses(options, logger);
  app.use('*', async function securityHeaders(c, next) {
    // Set before the handler answers, so @hono/node-server keeps its light Response.
    for (const [name, value] of SECURITY_HEADERS) c.header(name, value);
    // The one place the caller's address is decided, and the key every per-address limit counts it under.
    const peer = options.clientAddress?.(c.req.raw, c.env) || socketAddress(c);
    const key = addressKey(peer && trustProxy ? clientAddress(peer, c.req.header('x-forwarded-for'), trustProxy) : peer);
    if (key === undefined) unknownAddress();
    c.set('clientKey', key);
    await next();
  });
  if (metrics) app.use('*', metrics.httpRequests());
  app.use('/v1/*', cors(origins, logger));
  app.use('/v1/*', allowedMethods(app as never));
  app.use('*', refuseNulInUrl);
  // Every route that reads a body (the game's, the webhooks', the operator's) reads it bounded.
  app.use('*', async function bodyLimit(c, next) {
    c.set('maxBodyBytes', maxBodyBytes);
    if (options.bodyTimeoutMs) c.set('bodyTimeoutMs', options.bodyTimeoutMs);
    await next();
  });

  app.get('/v1/health', (c) => c.json({ ok: true, mode: options.mode ?? 'live', version: VERSION, originAllowed: originAllowed(origins, c.req.raw) } satisfies Health));
  app.route('/v1/ready', readyRoute(createReadiness({ ping: () => store.ping(), service: d.serviceCheck, draining: d.draining })));
  app.get('/v1/catalog', (c) => c.json(d.catalogBody));
  app.route(
    '/v1/players',
    playersRoute(payments, tokens, limiter, ledger, {
      verifyLink: options.verifyLink,
      linksPerAddressPerDay: options.linksPerAddressPerDay ?? DEFAULTS.linksPerAddressPerDay,
      logger,
    }),
  );
  // Matches /v1/rewards itself too.
  app.use('/v1/rewards/*', requirePlayer(tokens, limiter));
  app.route('/v1/rewards', rewardsRoute({ ledger, claim: d.claim, limiter, logger }));
  for (const path of ['/v1/events', '/v1/ramp-sessions', '/v1/withdrawal-requests']) app.use(`${path}/*`, requirePlayer(tokens, limiter, d.tickets));
  app.route('/v1/events', eventsRoute(events, d.hub, metrics?.streams ?? NO_GAUGE, createStreamCaps(options.streamCaps), d.tickets));
  app.route('/v1/ramp-sessions', rampRoute(payments, events, options.publicUrl?.replace(/\/$/, ''), logger));
  app.route('/v1/withdrawal-requests', withdrawalsRoute(payments));
  app.route('/v1/webhooks/payments', webhooksRoute(events, d.hub, logger, d.webhookLimiter, options.webhooks ?? {}));

  if (metrics && options.adminToken) {
    const admin = requireAdmin(options.adminToken, { failuresPerMinute: options.adminFailuresPerMinute });
    app.get('/metrics', admin, async (c) => c.body(await metrics.registry.metrics(), 200, { 'content-type': metrics.registry.contentType }));
    app.use('/admin/api/*', admin);
    app.route('/admin/api', adminApi({ ledger, events, decide: d.decide, limits: d.limits, metrics, wallet: d.wallet }));
    // The page and its script hold no data: they ask for the token, then read the API with it.
    const page = (pick: 'html' | 'js', type: string) => async (c: Context) =>
      c.body((await adminAssets())[pick], 200, { 'content-type': type, 'content-security-policy': ADMIN_PAGE_CSP, 'cache-control': 'no-store' });
    app.get('/admin', page('html', 'text/html; charset=utf-8'));
    app.get('/admin/app.js', page('js', 'text/javascript; charset=utf-8'));
  }

  app.notFound((c) => problemResponse(c, new RelayProblem('not_found')));
  app.onError((err, c) => {
    if (err instanceof RelayProblem) {
      logger.info({ event: 'problem', code: err.code, method: c.req.method, path: c.req.path });
      return problemResponse(c, err);
    }
    // The ledger out of reach is no bug of the client's nor the relay's: 503, come back shortly.
    if (isStoreOutage(err)) {
      logger.warn(
        { event: 'store_unavailable', err: { message: (err as Error).message, code: (err as { code?: string }).code }, method: c.req.method, path: c.req.path },
        'the store cannot be reached',
      );
      return problemResponse(c, new RelayProblem('store_unavailable', undefined, { 'Retry-After': '5' }));
    }
    logger.error({ err, method: c.req.method, path: c.req.path }, 'relay error');
    return problemResponse(c, new RelayProblem('internal'));
  });

  return {
    fetch: (request: Request, env?: unknown) => app.fetch(request, env as RelayEnv['Bindings']),
  };
}

/**
 * Without a client address (no socket, no `clientAddress` option), the per-address limits cannot
 * count a request: it passes them, rather than every client sharing one bucket (ten players, and
 * the seventh is refused). Said loudly: at start where the runtime plainly gives no socket (Bun,
 * Deno, an edge runtime), else at the first such request; once.
 */
function warnOfUnknownAddresses(options: HttpOptions, logger: Logger): () => void {
  const limits = [
    (options.rateLimitPerMinute ?? DEFAULTS.rateLimitPerMinute) > 0 && 'RELAY_RATE_LIMIT_PER_MINUTE',
    (options.linksPerAddressPerDay ?? DEFAULTS.linksPerAddressPerDay) > 0 && 'RELAY_LINKS_PER_ADDRESS_PER_DAY',
    (options.addressDailyCapSats ?? DEFAULTS.addressDailyCapSats) > 0 && 'RELAY_ADDRESS_DAILY_CAP_SATS',
    (options.streamCaps?.perAddress ?? DEFAULTS.streamsPerAddress) > 0 && 'RELAY_STREAMS_PER_ADDRESS',
    (options.webhookRateLimitPerMinute ?? DEFAULTS.webhookRateLimitPerMinute) > 0 && 'RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE',
    options.adminToken !== undefined && 'RELAY_ADMIN_FAILURES_PER_MINUTE',
  ].filter((l): l is string => typeof l === 'string');
  let warned = limits.length === 0;
  const warn = (when: string) => {
    warned = true;
    logger.warn(
      { event: 'client_address_unknown', limits, option: 'clientAddress' },
      `NO CLIENT ADDRESS ${when}: the per-address limits (${limits.join(', ')}) do not count such requests. ` +
        "Give the relay the caller's address: createRelay({ clientAddress(request, env) { … } }) (docs/relay-api.md#addresses)",
    );
  };
  const node = typeof globalThis.process?.versions?.node === 'string' && !('Bun' in globalThis) && !('Deno' in globalThis);
  if (!warned && !options.clientAddress && !node) warn('on this runtime (no socket, no clientAddress option)');
  return () => {
    if (!warned) warn(options.clientAddress ? 'from clientAddress or a socket for a request' : 'for a request (no socket, no clientAddress option)');
  };
}
