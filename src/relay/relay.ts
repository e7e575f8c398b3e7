import type { Logger } from 'pino';
import { utcDay } from '../wire/earning-rules.js';
import type { CatalogEntry, CatalogResponse, PayoutMode } from '../wire/relay-api.js';
import { achievementsOf, type Catalog, type CatalogItem, createCatalog, DEFAULT_CATALOG } from './core/catalog.js';
import { catalogAt, tournamentsAt, usesDollars } from './core/catalog-at.js';
import { countsDollars } from './core/claim-decision.js';
import type { VerifyClaim } from './core/claims.js';
import { createCore } from './core/create-core.js';
import { createEventHub } from './core/live-events.js';
import { createPlayerTokens } from './core/player-tokens.js';
import type { VerifyLink } from './core/players.js';
import type { RelayStore } from './core/ports/relay-store.js';
import { createPrices, type Prices } from './core/prices.js';
import { SELF_REFERRAL_WINDOW_MS } from './core/referral-decision.js';
import { secretList } from './core/secret-list.js';
import { createStreamTickets } from './core/stream-tickets.js';
import { PROOF_MAX_TTL_SECONDS } from './core/unlock-proof.js';
import { createApp } from './http/app.js';
import { createRateLimiter } from './http/middleware/rate-limit.js';
import { type HttpOptions, httpSettings } from './http/options.js';
import { CLAIM_BATCH_MAX } from './http/routes/rewards.js';
import { createLogger } from './ops/logger.js';
import { createMetrics } from './ops/metrics.js';
import { createWalletBalance } from './ops/wallet-balance.js';
import { createPaymentsClient, type PaymentsClient, type PaymentsClientOptions } from './payments/client.js';
import { claimLimits } from './settings/claim-limits.js';
import { DEFAULTS } from './settings/schema.js';
import { openSqliteStore } from './store/sqlite/store.js';

export { VERSION } from './version.js';

const DAY_MS = 86_400_000;
/** How often the ledger forgets what only past days' limits read (and at start). */
const PRUNE_EVERY_MS = 3_600_000;
/** How often the relay finishes referrals a crash left undone (and at start). */
const REFERRAL_SWEEP_EVERY_MS = 300_000;

export { SECURITY_HEADERS } from './http/security-headers.js';

/** The relay's options: what the HTTP side reads (http/options.ts), and what the core and stores are made of. */
export interface RelayOptions extends HttpOptions {
  /** The payments service: a client, or where it is and the key. */
  payments: PaymentsClient | PaymentsClientOptions;
  /** Where the ledger and the event log live: a store, or the path of the SQLite file for both. */
  store?: RelayStore | string;
  /** @deprecated The name of `store` before 0.2 (a SQLite file's path); still accepted. */
  ledger?: string;
  /** Signs player tokens. Keep it stable across restarts, or players link again. */
  secret: string;
  /** Default: DEFAULT_CATALOG. */
  catalog?: Catalog | ReadonlyArray<CatalogItem | CatalogEntry>;
  /** Per userId, per UTC day; 0: no cap. Default: RELAY_USER_DAILY_CAP_SATS's (docs/configuration.md). */
  userDailyCapSats?: number;
  /** The whole project, per UTC day; 0: no budget. Default: RELAY_DAILY_BUDGET_SATS's. */
  dailyBudgetSats?: number;
  /** RELAY_USER_DAILY_CAP_USD: in place of userDailyCapSats (not both), dollars per player per UTC day; 0 or absent: none. */
  userDailyCapUsd?: number;
  /** RELAY_DAILY_BUDGET_USD: in place of dailyBudgetSats (not both), dollars for the project per UTC day; 0 or absent: none. */
  dailyBudgetUsd?: number;
  /** RELAY_PRICE_TTL_SECONDS: with dollar prices or limits, the BTC/USD price is read this often. Default 60. */
  priceTtlSeconds?: number;
  /** RELAY_PRICE_MAX_AGE_SECONDS: an older price refuses dollar-priced claims (503 price_unavailable). Default 600. */
  priceMaxAgeSeconds?: number;
  /** With a shared ledger: how often to look for payments other relays abandoned (their lease ran out). */
  recoverEveryMs?: number;
  /** How long a player token lives. Default 24 h. */
  tokenTtlMs?: number;
  /** A game's own server-side check before a payout. */
  verifyClaim?: VerifyClaim;
  /**
   * RELAY_GAME_SERVER_SECRET: checks the unlock proofs of achievements with `proof: 'server'`
   * (signUnlock). Several, comma-separated or listed: the first is current, every one verifies.
   */
  gameServerSecret?: string | readonly string[];
  /** A claim worth more than this is held for an operator's approval; 0: none (the default). */
  holdAboveSats?: number;
  /**
   * Hours an operator's denial refuses the same player's claims of the same achievement (`rejected`,
   * `denied_recently`: no new held entry, no call to the service); 0: off. Default: RELAY_DENIAL_COOLDOWN_HOURS's.
   */
  denialCooldownHours?: number;
  logger?: Logger;
  /** Below this balance the project wallet is low: a warning in the log and on the operator's page. Default: one day's budget. */
  walletLowSats?: number;
  /** A human check at link (a captcha's server-side verification): false refuses the link (403 `link_refused`). */
  verifyLink?: VerifyLink;
  /** The relay's address as the service reaches it, for webhook_url. Without it, no ramp sessions. */
  publicUrl?: string;
  /**
   * RELAY_PAYOUT_MODE: `instant` (default) pays each claim at once; `balance` credits it to the
   * player's balance, which the player withdraws from (`POST /v1/withdrawals`). An achievement's
   * own `payout` wins over it. docs/balance.md.
   */
  payoutMode?: PayoutMode;
  /** RELAY_MIN_WITHDRAWAL_SATS: the smallest withdrawal. Default: the setting's. */
  minWithdrawalSats?: number;
  /** RELAY_WITHDRAWAL_DAILY_LIMIT_SATS: what a player may withdraw per UTC day; 0 (default): no daily limit. */
  withdrawalDailyLimitSats?: number;
  /** RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS: the allowance grows by this per minute of witnessed play; 0 (default): no allowance. */
  withdrawalAllowancePerPlayMinuteSats?: number;
  /** RELAY_WITHDRAWAL_ALLOWANCE_START_SATS: the allowance before any play. Default 0. */
  withdrawalAllowanceStartSats?: number;
}

export interface Relay {
  /** The web-standard handler: serve it with Node, Bun, Deno or an edge runtime. */
  fetch: (request: Request, env?: unknown) => Response | Promise<Response>;
  /** Settled when crash recovery at start is done (reconciliation with the service goes on after). */
  ready: Promise<void>;
  /** Settles needs_review intents whose transaction id is known, through the payment-status endpoint. */
  reconcile(): Promise<{ settled: number; open: number }>;
  /**
   * Begins to stop: from now on `/v1/ready` answers 503 `not_ready` with `"draining": true`, so a
   * balancer that probes it sends nothing more here, while every other request is still answered.
   * `close()` does it first; a server stopping gracefully calls it as soon as it is told to stop.
   */
  drain(): void;
  close(): Promise<void>;
}

/** The relay: the only holder of the API key; decides amounts, enforces limits, pays each intent once. */
export function createRelay(options: RelayOptions): Relay {
  const startedAt = Date.now();
  const logger = options.logger ?? createLogger();
  const where = options.store ?? options.ledger;
  if (!where) throw new Error('createRelay needs a store: the path of a SQLite file, or { ledger, events, close }');
  const store = typeof where === 'string' ? openSqliteStore(where) : where;
  const { ledger, events } = store;
  const client = 'sendPayment' in options.payments ? options.payments : createPaymentsClient({ logger, ...options.payments });
  const catalog: Catalog =
    options.catalog instanceof Map ? options.catalog : createCatalog((options.catalog as ReadonlyArray<CatalogEntry | CatalogItem> | undefined) ?? DEFAULT_CATALOG);
  const limits = claimLimits(options);
  // The price is kept only when something is in dollars: otherwise nothing asks the service for it.
  const prices: Prices | undefined =
    usesDollars(catalog) || countsDollars(limits)
      ? createPrices((): ReturnType<PaymentsClient['btcUsd']> => payments.btcUsd(), {
          ttlMs: (options.priceTtlSeconds ?? DEFAULTS.priceTtlSeconds) * 1000,
          maxAgeMs: (options.priceMaxAgeSeconds ?? DEFAULTS.priceMaxAgeSeconds) * 1000,
          logger,
        })
      : undefined;
  const wallet = createWalletBalance(client, { lowSats: options.walletLowSats ?? options.dailyBudgetSats ?? DEFAULTS.dailyBudgetSats, logger });
  const metrics = options.adminToken
    ? createMetrics({
        needsReview: async () => (await ledger.inState('needs_review')).length,
        held: async () => (await ledger.inState('held')).length,
        budgetUsedSats: () => ledger.budgetUsed(utcDay(Date.now())),
        walletBalanceSats: async () => (await wallet.read()).balanceSats,
        ...(ledger.balancesOwed ? { balancesOwedSats: () => ledger.balancesOwed!() } : {}),
        ...(prices ? { price: () => prices.peek() } : {}),
        ...(prices && ledger.budgetUsedUsd ? { budgetUsedUsd: () => ledger.budgetUsedUsd!(utcDay(Date.now())) } : {}),
      })
    : undefined;
  const payments = metrics ? metrics.instrument(client) : client;
  const streams = createEventHub();
  // A log shared by several relays tells every relay's streams of every append, in commit order;
  // then this relay's own appends reach them that way too, not a second, earlier way.
  const hub = events.subscribe ? { ...streams, publish: () => undefined } : streams;
  const tokens = createPlayerTokens(options.secret, options.tokenTtlMs ?? 24 * 3_600_000);
  const limiter = createRateLimiter(options.rateLimitPerMinute ?? DEFAULTS.rateLimitPerMinute);
  const webhookLimiter = createRateLimiter(options.webhookRateLimitPerMinute ?? DEFAULTS.webhookRateLimitPerMinute);
  const gameServerSecrets = options.gameServerSecret === undefined ? [] : secretList(options.gameServerSecret);
  const needsProof = achievementsOf(catalog)
    .filter((a) => a.proof === 'server')
    .map((a) => a.id);
  if (needsProof.length && !gameServerSecrets.length)
    throw new Error(`The catalog asks for server proofs (${needsProof.join(', ')}): set RELAY_GAME_SERVER_SECRET (gameServerSecret)`);
  // A tournament's results come only from the game's server, behind its secret.
  if (catalog.tournaments?.size && !gameServerSecrets.length)
    throw new Error(`The catalog has tournaments (${[...catalog.tournaments.keys()].join(', ')}): set RELAY_GAME_SERVER_SECRET (gameServerSecret)`);
  prices?.start();
  const core = createCore({
    prices,
    store,
    payments,
    catalog,
    limits,
    logger,
    tokens,
    publish: hub.publish,
    metrics,
    referralMetrics: metrics,
    wallet,
    verifyClaim: options.verifyClaim,
    gameServerSecrets,
    holdAboveSats: options.holdAboveSats ?? DEFAULTS.holdAboveSats,
    verifyLink: options.verifyLink,
    linksPerAddressPerDay: options.linksPerAddressPerDay ?? DEFAULTS.linksPerAddressPerDay,
    publicUrl: options.publicUrl?.replace(/\/$/, ''),
    payoutMode: options.payoutMode ?? DEFAULTS.payoutMode,
    withdrawals: {
      minWithdrawalSats: options.minWithdrawalSats ?? DEFAULTS.minWithdrawalSats,
      dailyLimitSats: options.withdrawalDailyLimitSats ?? DEFAULTS.withdrawalDailyLimitSats,
      allowancePerPlayMinuteSats: options.withdrawalAllowancePerPlayMinuteSats ?? DEFAULTS.withdrawalAllowancePerPlayMinuteSats,
      allowanceStartSats: options.withdrawalAllowanceStartSats ?? DEFAULTS.withdrawalAllowanceStartSats,
    },
  });
  const { payouts } = core;
  // A claim may wait on two calls to the service (the gamertag, then the payment): clients wait longer.
  const serviceTimeoutMs = ('sendPayment' in options.payments ? undefined : options.payments.timeoutMs) ?? DEFAULTS.paymentsTimeoutMs;
  const catalogBody = (): CatalogResponse => ({
    achievements: catalogAt(catalog, prices?.peek().btcUsd),
    ...(catalog.tournaments ? { tournaments: tournamentsAt(catalog, prices?.peek().btcUsd) } : {}),
    claimTimeoutMs: 2 * serviceTimeoutMs + 1_000,
    claimBatchMax: CLAIM_BATCH_MAX,
    ...(options.payoutMode === 'balance' ? { payoutMode: 'balance' as const } : {}),
  });

  const app = createApp({
    settings: httpSettings(options),
    core,
    store,
    serviceCheck: () => client.wallet(),
    draining: () => draining,
    tokens,
    tickets: createStreamTickets(options.secret),
    limiter,
    webhookLimiter,
    catalogBody,
    hub,
    logger,
    ...(metrics ? { metrics } : {}),
    wallet,
    gameServerSecrets,
  });

  let draining = false;
  let unsubscribe: (() => Promise<void>) | undefined;
  let sweeper: ReturnType<typeof setInterval> | undefined;
  // The wallet is read once a minute whoever looks, so a low balance is in the log before payouts fail.
  const walletWatch = setInterval(() => void wallet.read(), 60_000);
  walletWatch.unref();
  void wallet.read();
  let closing = false;
  // Past days' reservations, address links, expired proofs' nonces, deferred claims a day old
  // (they hold nothing) and where players were seen past the self-referral window: kept, they
  // would grow with every player and every address for ever (a bot farm's most of all). A day is
  // kept past its end, and a nonce a day past its proof's longest life, against clocks a little apart.
  // A store of one's own may not prune (prune is optional); one run at a time.
  let pruning: Promise<void> | undefined;
  const prune = () =>
    (pruning ??= Promise.resolve()
      .then(async () => {
        const now = Date.now();
        const rows = await ledger.prune?.(utcDay(now - DAY_MS), now - PROOF_MAX_TTL_SECONDS * 1000 - DAY_MS, now - DAY_MS);
        return (rows ?? 0) + ((await store.referrals?.forget?.(now - SELF_REFERRAL_WINDOW_MS - DAY_MS)) ?? 0);
      })
      .then(
        (rows) => {
          if (rows) logger.info({ event: 'pruned', rows }, `forgot ${rows} rows of past days' limits, expired proofs, deferred claims and old addresses`);
        },
        (err: unknown) => {
          // A store closing under it (the relay stopping) is no failure to report.
          if (!closing) logger.warn({ err, event: 'prune_failed' }, 'pruning past days failed: it is tried again within the hour');
        },
      )
      .finally(() => (pruning = undefined)));
  const pruner = setInterval(prune, PRUNE_EVERY_MS);
  pruner.unref();
  // Referrals a crash left between the referee's payment and the rewards (core/referrals.ts), and
  // prizes whose payment could not leave (core/prize-redelivery.ts); one run at a time.
  let sweeping: Promise<void> | undefined;
  const referralsOn = Boolean(core.referrals?.programs.length);
  const sweepPrograms = () =>
    referralsOn || core.redeliverPrizes
      ? (sweeping ??= Promise.all([referralsOn ? core.referrals?.sweep() : undefined, core.redeliverPrizes?.()])
          .then(
            () => undefined,
            (err: unknown) => {
              if (!closing) logger.warn({ err, event: 'referral_sweep_failed' }, 'finishing referrals or sending deferred prizes failed: tried again in five minutes');
            },
          )
          .finally(() => (sweeping = undefined)))
      : undefined;
  const referralSweeper = setInterval(() => void sweepPrograms(), REFERRAL_SWEEP_EVERY_MS);
  referralSweeper.unref();
  let reconciling: Promise<unknown> = Promise.resolve();
  const ready = (async () => {
    if (events.subscribe) unsubscribe = await events.subscribe(streams.publish, streams.listening);
    const interrupted = await payouts.recover(startedAt);
    if (interrupted) logger.warn({ event: 'review', interrupted }, 'intents await review');
    // The reviews the service can settle are asked about after the relay is up: one call each
    // (with retries) would hold the start for minutes when there are many, or the service is slow.
    reconciling = payouts.reconcile().then(
      ({ settled, open }) => {
        if (settled || open) logger.warn({ event: 'review', reconciled: settled, open }, 'intents await review');
      },
      (err: unknown) => logger.error({ err }, 'reconciliation at start failed'),
    );
    void prune();
    void sweepPrograms();
    // With relays sharing a ledger, one that dies leaves its payments to the others, once its lease runs out.
    if (options.recoverEveryMs) {
      sweeper = setInterval(() => void payouts.recover(startedAt).catch((err: unknown) => logger.error({ err }, 'recovery failed')), options.recoverEveryMs);
      sweeper.unref();
    }
  })();
  ready.catch((err: unknown) => logger.error({ err }, 'recovery at start failed'));

  return {
    fetch: app.fetch,
    ready,
    reconcile: payouts.reconcile,
    drain() {
      draining = true;
    },
    async close() {
      draining = true;
      // Streams first, as a Node server's shutdown does: nothing else ends them when embedded.
      app.endStreams();
      await ready.catch(() => undefined);
      await reconciling;
      clearInterval(sweeper);
      clearInterval(pruner);
      clearInterval(referralSweeper);
      await sweeping;
      await core.referrals?.idle();
      clearInterval(walletWatch);
      prices?.stop();
      // Let payments in flight settle first: closing under them would leave them for review.
      await payouts.drain();
      await unsubscribe?.();
      closing = true;
      await store.close();
      payments.close();
    },
  };
}
