import { Hono } from 'hono';
import { z } from 'zod';
import type { EventLog } from '../../core/ports/event-log.js';
import type { Ledger, LedgerEntry } from '../../core/ports/ledger.js';
import type { Referral } from '../../core/ports/referral-store.js';
import type { Reports } from '../../core/reports.js';
import type { ReviewAction, Reviews } from '../../core/reviews.js';
import type { Metrics } from '../../ops/metrics.js';
import type { WalletBalance } from '../../ops/wallet-balance.js';
import { type RelayEnv, readJson } from '../context.js';
import { operatorName } from '../middleware/admin-auth.js';
import { RelayProblem } from '../problems.js';

const markPaidSchema = z.strictObject({ transactionId: z.string().trim().min(1).max(128) });

export interface AdminDeps {
  ledger: Ledger;
  events: EventLog;
  decide: Reviews;
  reports: Reports;
  wallet: WalletBalance;
  metrics: Metrics;
  /** The newest referrals (issue 37); absent on a store without them. */
  referrals?: ((limit: number) => Promise<Referral[]>) | undefined;
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
export function adminApi({ ledger, events, decide, reports, metrics, wallet, referrals }: AdminDeps) {
  const actor = (c: { req: { header(n: string): string | undefined } }) => operatorName(c.req.header('x-operator'));
  return (
    new Hono<RelayEnv>()
      .get('/summary', async (c) => {
        const summary = await reports.summary(Date.now());
        if (!summary.balances) return c.json(summary);
        // Balance mode: what the players could withdraw, beside what the wallet holds to pay it.
        const walletSats = (await wallet.read()).balanceSats;
        return c.json({
          ...summary,
          balances: { ...summary.balances, walletBalanceSats: walletSats ?? null, short: walletSats !== undefined && walletSats < summary.balances.owedSats },
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
      .get('/health', async (c) => c.json(await serviceHealth(metrics, wallet)))
      // Who referred whom, and where each referral stands (pending, qualified, refused and why).
      .get('/referrals', async (c) =>
        c.json({
          referrals: ((await referrals?.(100)) ?? []).map((r) => ({
            ...r,
            linkedAt: new Date(r.linkedAt).toISOString(),
            ...(r.qualifiedAt !== undefined ? { qualifiedAt: new Date(r.qualifiedAt).toISOString() } : {}),
          })),
        }),
      )
  );
}
