import { type Context, Hono } from 'hono';
import type { Logger } from 'pino';
import type { CatalogResponse, Health } from '../../wire/relay-api.js';
import type { Core } from '../core/create-core.js';
import type { EventHub } from '../core/live-events.js';
import type { PlayerTokens } from '../core/player-tokens.js';
import { isStoreOutage } from '../core/ports/outage.js';
import type { RelayStore } from '../core/ports/relay-store.js';
import { Refusal } from '../core/refusal.js';
import type { StreamTickets } from '../core/stream-tickets.js';
import type { Metrics } from '../ops/metrics.js';
import { createReadiness, type ReadinessOptions } from '../ops/readiness.js';
import type { WalletBalance } from '../ops/wallet-balance.js';
import { VERSION } from '../version.js';
import { ADMIN_PAGE_CSP, adminAssets } from './admin/assets.js';
import { type RelayEnv, requirePlayer } from './context.js';
import type { PlayerStream } from './event-stream/player-stream.js';
import { requireAdmin } from './middleware/admin-auth.js';
import { originAllowed } from './middleware/cors.js';
import { door } from './middleware/door.js';
import type { RateLimiter } from './middleware/rate-limit.js';
import type { HttpSettings } from './options.js';
import { problemOf, problemResponse, RelayProblem } from './problems.js';
import { adminApi } from './routes/admin.js';
import { allowanceRoute, balanceRoutes } from './routes/balance.js';
import { eventsRoute } from './routes/events.js';
import { playersRoute } from './routes/players.js';
import { rampRoute } from './routes/ramp.js';
import { readyRoute } from './routes/ready.js';
import { referralCodeRoute } from './routes/referrals.js';
import { rewardsRoute } from './routes/rewards.js';
import { tournamentsRoute } from './routes/tournaments.js';
import { webhooksRoute } from './routes/webhooks.js';
import { withdrawalsRoute } from './routes/withdrawals.js';
import { createStreamCaps } from './stream-caps.js';

const NO_GAUGE = { inc: () => undefined, dec: () => undefined };

/**
 * What the HTTP side is made of: the core's use cases, the stores' read side, the door's limiters
 * and its own settings. Nothing else of the relay's options reaches it.
 */
export interface HttpDeps {
  settings: HttpSettings;
  core: Pick<
    Core,
    'claim' | 'recordOf' | 'decide' | 'link' | 'openRampSession' | 'withdrawalRequest' | 'reports' | 'balances' | 'guests' | 'userIdOf' | 'postResults' | 'referrals'
  >;
  /** RELAY_GAME_SERVER_SECRET: the game's server's bearer for `/v1/server/*`. */
  gameServerSecrets?: readonly string[];
  /** Readiness pings it; rewards' history, the event streams, the webhooks' inbox and the operator read it. */
  store: RelayStore;
  /** A cheap call to the service, for readiness. */
  serviceCheck: ReadinessOptions['service'];
  /** True once the relay began to stop: readiness says no at once. */
  draining: () => boolean;
  tokens: PlayerTokens;
  /** Single-use tickets for the event stream (signed with the player-token secret). */
  tickets: StreamTickets;
  limiter: RateLimiter;
  webhookLimiter: RateLimiter;
  /** `GET /v1/catalog`'s body: dollar-priced entries at the price held now. */
  catalogBody: () => CatalogResponse;
  hub: EventHub;
  logger: Logger;
  /** Present with the operator's surface (an admin token). */
  metrics?: Metrics;
  wallet: WalletBalance;
}

/**
 * The relay's HTTP surface as a web-standard handler: the door (one middleware calling each
 * concern in turn), the player's token where a route needs one, then thin routes that parse, call
 * the core and answer. The operator's surface exists only with a token.
 */
export function createApp(d: HttpDeps) {
  const { settings, core, store, tokens, limiter, logger, metrics } = d;
  const { ledger, events } = store;
  const origins = settings.allowedOrigins;
  const app = new Hono<RelayEnv>();

  // Counts every answer, the door's refusals too; it adds nothing to the answer itself.
  if (metrics) app.use('*', metrics.httpRequests());
  app.use('*', door(settings, logger, app as never));

  app.get('/v1/health', (c) => c.json({ ok: true, mode: settings.mode, version: VERSION, originAllowed: originAllowed(origins, c.req.raw) } satisfies Health));
  app.route('/v1/ready', readyRoute(createReadiness({ ping: () => store.ping(), service: d.serviceCheck, draining: d.draining })));
  app.get('/v1/catalog', (c) => c.json(d.catalogBody()));
  app.route('/v1/players', playersRoute(core.link, limiter));
  // Balance mode: a guest's token stops working once the guest linked a gamertag.
  const retired = core.guests?.retired;
  // Matches /v1/rewards itself too.
  app.use('/v1/rewards/*', requirePlayer(tokens, limiter, undefined, retired));
  app.route('/v1/rewards', rewardsRoute({ ledger, claim: core.claim, recordOf: core.recordOf, limiter, logger }));
  for (const path of ['/v1/events', '/v1/ramp-sessions', '/v1/withdrawal-requests']) app.use(`${path}/*`, requirePlayer(tokens, limiter, d.tickets, retired));
  const streams = new Set<PlayerStream>();
  app.route('/v1/events', eventsRoute(events, d.hub, metrics?.streams ?? NO_GAUGE, createStreamCaps(settings.streamCaps), d.tickets, undefined, streams));
  app.route('/v1/ramp-sessions', rampRoute(core.openRampSession));
  app.route('/v1/withdrawal-requests', withdrawalsRoute(core.withdrawalRequest));
  if (core.referrals?.programs.length) {
    app.use('/v1/referral-code', requirePlayer(tokens, limiter, undefined, retired));
    app.route('/v1/referral-code', referralCodeRoute(core.referrals.code));
  }
  app.route('/v1/webhooks/payments', webhooksRoute(events, d.hub, logger, d.webhookLimiter, settings.webhooks));
  if (core.balances) {
    for (const path of ['/v1/balance', '/v1/withdrawals', '/v1/play']) app.use(`${path}/*`, requirePlayer(tokens, limiter, undefined, retired));
    app.route('/v1', balanceRoutes(core.balances));
    if (d.gameServerSecrets?.length) {
      const server = requireAdmin(d.gameServerSecrets, { required: "The game's server secret (RELAY_GAME_SERVER_SECRET) is required" });
      app.use('/v1/server/withdrawal-allowance', server);
      app.route('/v1/server/withdrawal-allowance', allowanceRoute(core.balances, core.userIdOf));
    }
  }
  // Tournaments: only the game's server posts results (a browser never holds its secret).
  if (core.postResults && d.gameServerSecrets?.length) {
    app.use('/v1/server/tournaments/*', requireAdmin(d.gameServerSecrets, { required: "The game's server secret (RELAY_GAME_SERVER_SECRET) is required" }));
    app.route('/v1/server/tournaments', tournamentsRoute(core.postResults));
  }

  if (metrics && settings.adminToken) {
    const admin = requireAdmin(settings.adminToken, { failuresPerMinute: settings.adminFailuresPerMinute });
    app.get('/metrics', admin, async (c) => c.body(await metrics.registry.metrics(), 200, { 'content-type': metrics.registry.contentType }));
    app.use('/admin/api/*', admin);
    app.route('/admin/api', adminApi({ ledger, events, decide: core.decide, reports: core.reports, metrics, wallet: d.wallet, referrals: core.referrals?.recent }));
    // The page and its script hold no data: they ask for the token, then read the API with it.
    const page = (pick: 'html' | 'js', type: string) => async (c: Context) =>
      c.body((await adminAssets())[pick], 200, { 'content-type': type, 'content-security-policy': ADMIN_PAGE_CSP, 'cache-control': 'no-store' });
    app.get('/admin', page('html', 'text/html; charset=utf-8'));
    app.get('/admin/app.js', page('js', 'text/javascript; charset=utf-8'));
  }

  app.notFound((c) => problemResponse(c, new RelayProblem('not_found')));
  app.onError((thrown, c) => {
    // A use case's refusal is the problem of the same code.
    const err = thrown instanceof Refusal ? problemOf(thrown) : thrown;
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
    /** Ends every open event stream (the relay is closing): each client reconnects, to another relay. */
    endStreams: () => {
      for (const s of [...streams]) s.end();
    },
  };
}
