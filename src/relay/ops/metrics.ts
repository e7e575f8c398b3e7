import type { MiddlewareHandler } from 'hono';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { PaymentsClient } from '../payments/client.js';

/** What the scrape reads at the moment it asks: the ledger, and the project wallet (cached). */
export interface LedgerGauges {
  needsReview(): Promise<number>;
  /** Claims held for an operator's approval. */
  held?(): Promise<number>;
  budgetUsedSats(): Promise<number>;
  /** The project wallet's balance as last read (at most one call to the service a minute). */
  walletBalanceSats?(): Promise<number | undefined>;
  /** Balance mode: every player's balance together. */
  balancesOwedSats?(): Promise<number>;
  /** With dollar prices or limits (issue 38): today's spend in dollars, each entry at the price it was decided at. */
  budgetUsedUsd?(): Promise<number>;
  /** With dollar prices or limits: the BTC/USD price in force, and when it was read (ms). */
  price?(): { btcUsd: number | undefined; at: number | undefined };
}

/**
 * A figure the store cannot give right now (the database is down) is left out of the scrape:
 * the rest of it (process, HTTP, service calls) still reaches the operator.
 */
async function orSkip(read: () => Promise<void>) {
  try {
    await Promise.race([read(), new Promise((_, reject) => setTimeout(() => reject(new Error('slow')), 2000).unref())]);
  } catch {
    // Left out of this scrape.
  }
}

/**
 * The relay's Prometheus metrics (prom-client), in a registry of its own: payouts by final state
 * and achievement, sats paid, payout and payments-service latency, service errors by kind, open
 * reviews, budget used, open event streams, HTTP requests by route and status.
 */
export function createMetrics(ledger: LedgerGauges) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'rewardbus_process_' });
  const payouts = new Counter({ name: 'rewardbus_payouts_total', help: 'Reward intents that reached a final state', labelNames: ['state', 'achievement'], registers: [registry] });
  const satsPaid = new Counter({ name: 'rewardbus_sats_paid_total', help: 'Sats paid to players', registers: [registry] });
  const payoutSeconds = new Histogram({
    name: 'rewardbus_payout_seconds',
    help: 'From a committed claim to its settlement',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const serviceSeconds = new Histogram({
    name: 'rewardbus_service_call_seconds',
    help: 'Calls to the payments service, by call',
    labelNames: ['call'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const serviceErrors = new Counter({
    name: 'rewardbus_service_errors_total',
    help: 'Calls to the payments service that did not succeed, by call and kind',
    labelNames: ['call', 'kind'],
    registers: [registry],
  });
  const contradictions = new Counter({
    name: 'rewardbus_contradictions_total',
    help: "The payments service's answer contradicted a final decision (the intent went back to review)",
    registers: [registry],
  });
  const streams = new Gauge({ name: 'rewardbus_event_streams_open', help: 'Player event streams open on this relay', registers: [registry] });
  const http = new Counter({ name: 'rewardbus_http_requests_total', help: 'HTTP requests, by route and status', labelNames: ['route', 'status'], registers: [registry] });
  new Gauge({
    name: 'rewardbus_needs_review_open',
    help: 'Intents waiting for review (the shared ledger: every relay reports the same)',
    registers: [registry],
    async collect() {
      await orSkip(async () => this.set(await ledger.needsReview()));
    },
  });
  new Gauge({
    name: 'rewardbus_held_open',
    help: "Claims held for an operator's approval (the shared ledger: every relay reports the same)",
    registers: [registry],
    async collect() {
      await orSkip(async () => this.set((await ledger.held?.()) ?? 0));
    },
  });
  new Gauge({
    name: 'rewardbus_budget_used_sats',
    help: "Sats reserved or paid today (UTC) against the project's daily budget",
    registers: [registry],
    async collect() {
      await orSkip(async () => this.set(await ledger.budgetUsedSats()));
    },
  });

  if (ledger.balancesOwedSats) {
    const owed = ledger.balancesOwedSats;
    new Gauge({
      name: 'rewardbus_balances_owed_sats',
      help: "What the relay owes its players in balance mode: every balance together (the shared ledger's)",
      registers: [registry],
      async collect() {
        await orSkip(async () => this.set(await owed()));
      },
    });
  }
  // Issue 38: the price in force, its age, and the day's spend in dollars beside the sats.
  if (ledger.price) {
    const price = ledger.price;
    new Gauge({
      name: 'rewardbus_btc_usd',
      help: 'The BTC/USD price in force (dollars per bitcoin) that dollar-priced claims are decided at',
      registers: [registry],
      collect() {
        const p = price();
        if (p.btcUsd !== undefined) this.set(p.btcUsd);
      },
    });
    new Gauge({
      name: 'rewardbus_btc_usd_age_seconds',
      help: 'How old the BTC/USD price in force is; past RELAY_PRICE_MAX_AGE_SECONDS dollar-priced claims are refused',
      registers: [registry],
      collect() {
        const p = price();
        if (p.at !== undefined) this.set((Date.now() - p.at) / 1000);
      },
    });
  }
  if (ledger.budgetUsedUsd) {
    const usd = ledger.budgetUsedUsd;
    new Gauge({
      name: 'rewardbus_budget_used_usd',
      help: 'Dollars reserved or paid today (UTC), each entry at the price it was decided at',
      registers: [registry],
      async collect() {
        await orSkip(async () => this.set(await usd()));
      },
    });
  }
  const withdrawals = new Counter({
    name: 'rewardbus_withdrawals_total',
    help: "Withdrawals from players' balances that reached a state the player hears of, by status",
    labelNames: ['status'],
    registers: [registry],
  });
  // Issue 37: each link's referral answer (pending, not_new, unknown_code, self_referral), each qualification, each referrer capped.
  const referrals = new Counter({
    name: 'rewardbus_referrals_total',
    help: 'Referrals by outcome: the answer at link (pending, not_new, unknown_code, self_referral), qualified, referrer_daily_cap',
    labelNames: ['outcome'],
    registers: [registry],
  });
  new Gauge({
    name: 'rewardbus_wallet_balance_sats',
    help: "The project wallet's balance, as last read from the service (at most once a minute)",
    registers: [registry],
    async collect() {
      await orSkip(async () => {
        const sats = await ledger.walletBalanceSats?.();
        if (sats !== undefined) this.set(sats);
      });
    },
  });

  // A labelled counter found once per label values: prom-client hashes the labels on every inc().
  const labelled = <L extends string>(counter: Counter<L>) => {
    const children = new Map<string, Counter.Internal>();
    return (...values: string[]) => {
      const key = values.join('\0');
      let child = children.get(key);
      if (!child) children.set(key, (child = counter.labels(...values)));
      return child;
    };
  };
  const payoutsBy = labelled(payouts);
  const httpBy = labelled(http);
  const withdrawalsBy = labelled(withdrawals);

  return {
    registry,
    streams,
    /** A payout reached a final state (paid, failed, needs_review, rejected). */
    settled(state: string, achievementId: string, sats: number, sinceMs?: number, kind?: string) {
      if (kind === 'withdrawal') withdrawalsBy(state === 'sending' ? 'pending' : state === 'rejected' ? 'failed' : state).inc();
      else payoutsBy(state, achievementId).inc();
      if (state === 'paid') satsPaid.inc(sats);
      if (sinceMs !== undefined) payoutSeconds.observe((Date.now() - sinceMs) / 1000);
    },
    contradicted() {
      contradictions.inc();
    },
    /** A referral's outcome (core/referrals.ts). */
    referral(outcome: string) {
      referrals.inc({ outcome });
    },
    /** The payments client, each call timed and its failures counted. */
    instrument(client: PaymentsClient): PaymentsClient {
      const timed =
        <A extends unknown[], R extends { kind: string; reason?: string; status?: number }>(call: string, fn: (...a: A) => Promise<R>) =>
        async (...args: A): Promise<R> => {
          const end = serviceSeconds.startTimer({ call });
          const r = await fn(...args);
          end();
          if (r.kind !== 'ok') serviceErrors.inc({ call, kind: r.kind === 'refused' ? `refused_${r.status}` : `${r.kind}_${r.reason}` });
          return r;
        };
      return {
        sendPayment: timed('send_payment', client.sendPayment),
        userIdByGamertag: timed('user_id', client.userIdByGamertag),
        gamertagByUserId: timed('gamertag', client.gamertagByUserId),
        transaction: timed('transaction', client.transaction),
        withdrawalRequest: timed('withdrawal_request', client.withdrawalRequest),
        rampWidget: timed('ramp_widget', client.rampWidget),
        wallet: timed('wallet', client.wallet),
        btcUsd: timed('btc_usd', client.btcUsd),
        close: () => client.close(),
      };
    },
    /** Counts every answer by the route that matched it (its pattern, not the path: no ids in labels). */
    httpRequests: function httpRequests(): MiddlewareHandler {
      return async function countRequests(c, next) {
        await next();
        httpBy(c.req.routePath || 'unmatched', String(c.res.status)).inc();
      };
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
