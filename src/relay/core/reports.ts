import { utcDay } from '../../wire/earning-rules.js';
import type { ClaimLimits, Ledger } from './ports/ledger.js';
import type { PriceReading } from './prices.js';

const DAY_MS = 86_400_000;

/** Today at a glance and the last 7 days' payouts, for the operator (`GET /admin/api/summary`). */
export interface Summary {
  today: {
    day: string;
    satsPaid: number;
    byState: Record<string, number>;
    playersPaid: number;
    /** `limit` and `left` are null without a daily budget. */
    budget: { limit: number | null; used: number; left: number | null };
  };
  last7Days: { day: string; satsPaid: number }[];
  /** Balance mode: what the relay owes its players, every balance together. */
  balances?: { owedSats: number };
  /**
   * With dollar prices or limits (issue 38): the BTC/USD price in force and its age, and today's
   * spend in dollars (each entry at the price it was decided at) beside the dollar budget.
   */
  dollars?: { btcUsd: number | null; priceAgeSeconds: number | null; priceError?: string; usedUsd: number; budgetUsd: number | null; leftUsd: number | null };
}

/** The operator's reports, read from the ledger. */
export function createReports(
  ledger: Pick<Ledger, 'report' | 'budgetUsed' | 'balancesOwed' | 'budgetUsedUsd'>,
  limits: Pick<ClaimLimits, 'dailyBudgetSats' | 'dailyBudgetUsd'>,
  balanceMode = false,
  price?: () => PriceReading,
) {
  async function summary(now: number): Promise<Summary> {
    const today = utcDay(now);
    const rows = await ledger.report(utcDay(now - 6 * DAY_MS));
    const todays = rows.filter((r) => r.day === today);
    const used = await ledger.budgetUsed(today);
    const days = Array.from({ length: 7 }, (_, i) => utcDay(now - (6 - i) * DAY_MS));
    const owed = balanceMode && ledger.balancesOwed ? await ledger.balancesOwed() : undefined;
    const dollars = price ? await dollarsView(today, now, price()) : undefined;
    return {
      today: {
        day: today,
        satsPaid: todays.filter((r) => r.state === 'paid').reduce((s, r) => s + r.sats, 0),
        byState: Object.fromEntries(todays.map((r) => [r.state, r.count])),
        playersPaid: todays.find((r) => r.state === 'paid')?.players ?? 0,
        budget: { limit: limits.dailyBudgetSats || null, used, left: limits.dailyBudgetSats ? Math.max(0, limits.dailyBudgetSats - used) : null },
      },
      last7Days: days.map((day) => ({ day, satsPaid: rows.filter((r) => r.day === day && r.state === 'paid').reduce((s, r) => s + r.sats, 0) })),
      ...(owed !== undefined ? { balances: { owedSats: owed } } : {}),
      ...(dollars ? { dollars } : {}),
    };
  }

  async function dollarsView(today: string, now: number, p: PriceReading): Promise<NonNullable<Summary['dollars']>> {
    const usedUsd = (await ledger.budgetUsedUsd?.(today)) ?? 0;
    const budgetUsd = limits.dailyBudgetUsd || null;
    return {
      btcUsd: p.btcUsd ?? null,
      priceAgeSeconds: p.at === undefined ? null : Math.round((now - p.at) / 1000),
      ...(p.error ? { priceError: p.error } : {}),
      usedUsd,
      budgetUsd,
      leftUsd: budgetUsd === null ? null : Math.max(0, Math.round((budgetUsd - usedUsd) * 1e6) / 1e6),
    };
  }
  return { summary };
}

export type Reports = ReturnType<typeof createReports>;
