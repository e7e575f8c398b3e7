import { Hono } from 'hono';
import { z } from 'zod';
import { utcDay } from '../../../wire/earning-rules.js';
import type { EventLog } from '../../core/ports/event-log.js';
import type { ClaimLimits, Ledger, LedgerEntry } from '../../core/ports/ledger.js';
import type { ReviewAction, Reviews } from '../../core/reviews.js';
import type { Metrics } from '../../ops/metrics.js';
import type { WalletBalance } from '../../ops/wallet-balance.js';
import { type RelayEnv, readJson } from '../context.js';
import { operatorName } from '../middleware/admin-auth.js';
import { RelayProblem } from '../problems.js';

const DAY_MS = 86_400_000;

const markPaidSchema = z.strictObject({ transactionId: z.string().trim().min(1).max(128) });

export interface AdminDeps {
  ledger: Ledger;
  events: EventLog;
  decide: Reviews;
  limits: ClaimLimits;
  wallet: WalletBalance;
  /** Balance mode is on: the summary says what the relay owes its players. */
  balanceMode?: boolean;
  metrics: Metrics;
}

const view = (e: LedgerEntry, now: number) => ({
  id: e.id,
  userId: e.userId,
  gamertag: e.gamertag ?? null,
  // A withdrawal has no achievement: the operator's tables name it so.
  achievementId: e.kind === 'withdrawal' ? '(withdrawal)' : e.achievementId,
  kind: e.kind ?? 'payout',
  sats: e.sats,
  state: e.state,
  reason: e.reason ?? null,
  paymentId: e.paymentId ?? null,
  address: e.address ?? null,
  createdAt: new Date(e.createdAt).toISOString(),
  ageSeconds: Math.round((now - e.createdAt) / 1000),
});

/** The project wallet, for the page: its balance (cached a minute), and whether it is running low. */
async function walletView(wallet: WalletBalance) {
  const w = await wallet.read();
  return {
    walletBalanceSats: w.balanceSats ?? null,
    walletCheckedAt: w.checkedAt ? new Date(w.checkedAt).toISOString() : null,
    walletLow: w.low,
    walletLowSats: wallet.lowSats,
    ...(w.error ? { walletError: w.error } : {}),
  };
}

/** The service's health since this relay started, from its own metrics: calls, errors, latency. */
async function serviceHealth(metrics: Metrics, wallet: WalletBalance) {
  const latency = (await metrics.registry.getSingleMetric('rewardbus_service_call_seconds')?.get())?.values ?? [];
  const errors = (await metrics.registry.getSingleMetric('rewardbus_service_errors_total')?.get())?.values ?? [];
  const calls = latency.filter((v) => (v as { metricName?: string }).metricName === 'rewardbus_service_call_seconds_count').reduce((s, v) => s + v.value, 0);
  const seconds = latency.filter((v) => (v as { metricName?: string }).metricName === 'rewardbus_service_call_seconds_sum').reduce((s, v) => s + v.value, 0);
  const failed = errors.reduce((s, v) => s + v.value, 0);
  return {
    calls,
    errors: failed,
    errorRate: calls ? failed / calls : 0,
    meanLatencyMs: calls ? Math.round((seconds / calls) * 1000) : null,
    ...(await walletView(wallet)),
  };
}

/**
 * The operator's JSON API under /admin/api (the token is checked before it): today at a glance,
 * the last 7 days, the review queue and its three actions, claims held for approval (approve, deny), recent payouts, webhooks, the service's
 * health. Every decision by hand is recorded with who and when.
 */
export function adminApi({ ledger, events, decide, limits, metrics, wallet, balanceMode = false }: AdminDeps) {
  const actor = (c: { req: { header(n: string): string | undefined } }) => operatorName(c.req.header('x-operator'));
  return new Hono<RelayEnv>()
    .get('/summary', async (c) => {
      const now = Date.now();
      const today = utcDay(now);
      const rows = await ledger.report(utcDay(now - 6 * DAY_MS));
      const todays = rows.filter((r) => r.day === today);
      const used = await ledger.budgetUsed(today);
      // Balance mode: what the players could withdraw, beside what the wallet holds to pay it.
      const owed = balanceMode && ledger.balancesOwed ? await ledger.balancesOwed() : undefined;
      const walletSats = owed === undefined ? undefined : (await wallet.read()).balanceSats;
      const days = Array.from({ length: 7 }, (_, i) => utcDay(now - (6 - i) * DAY_MS));
      return c.json({
        today: {
          day: today,
          satsPaid: todays.filter((r) => r.state === 'paid').reduce((s, r) => s + r.sats, 0),
          byState: Object.fromEntries(todays.map((r) => [r.state, r.count])),
          playersPaid: todays.find((r) => r.state === 'paid')?.players ?? 0,
          budget: { limit: limits.dailyBudgetSats || null, used, left: limits.dailyBudgetSats ? Math.max(0, limits.dailyBudgetSats - used) : null },
        },
        ...(owed !== undefined ? { balances: { owedSats: owed, walletBalanceSats: walletSats ?? null, short: walletSats !== undefined && walletSats < owed } } : {}),
        last7Days: days.map((day) => ({ day, satsPaid: rows.filter((r) => r.day === day && r.state === 'paid').reduce((s, r) => s + r.sats, 0) })),
      });
    })
    .get('/review', async (c) => {
      const now = Date.now();
      // What the service contradicted comes first: a decision already taken is in doubt.
      const entries = (await ledger.inState('needs_review')).sort((a, b) => Number(b.reason === 'contradicted') - Number(a.reason === 'contradicted'));
      return c.json({ entries: entries.map((e) => view(e, now)) });
    })
    .get('/held', async (c) => {
      const now = Date.now();
      return c.json({ entries: (await ledger.inState('held')).map((e) => view(e, now)) });
    })
    .post('/review/:id/:action{reconcile|mark-paid|mark-failed|approve|deny}', async (c) => {
      const id = c.req.param('id');
      const action = c.req.param('action') as ReviewAction;
      const transactionId = action === 'mark-paid' ? (await readJson(c, markPaidSchema)).transactionId : undefined;
      const r = await decide(id, action, actor(c), transactionId);
      if (r.kind === 'not_in_review')
        throw new RelayProblem('not_found', action === 'approve' || action === 'deny' ? 'No claim with this id is held for approval' : 'No intent with this id awaits review');
      if (r.kind === 'refused') throw new RelayProblem(r.reason);
      if (r.kind === 'unsettled') return c.json({ settled: false, entry: view(r.entry, Date.now()), detail: r.detail });
      return c.json({ settled: true, entry: view(r.entry, Date.now()), audit: await ledger.audits(id) });
    })
    .get('/rewards/:id', async (c) => {
      const entry = await ledger.get(c.req.param('id'));
      if (!entry) throw new RelayProblem('not_found', 'No such intent');
      return c.json({ entry: view(entry, Date.now()), audit: await ledger.audits(entry.id) });
    })
    .get('/recent', async (c) => {
      const player = c.req.query('player')?.trim() || undefined;
      const achievement = c.req.query('achievement')?.trim() || undefined;
      const now = Date.now();
      const entries = await ledger.recent({ ...(player ? { userId: player } : {}), ...(achievement ? { achievementId: achievement } : {}) }, 100);
      return c.json({ entries: entries.map((e) => view(e, now)) });
    })
    .get('/webhooks', async (c) => c.json({ webhooks: (await events.recentWebhooks(50)).map((w) => ({ ...w, receivedAt: new Date(w.receivedAt).toISOString() })) }))
    .get('/health', async (c) => c.json(await serviceHealth(metrics, wallet)));
}
