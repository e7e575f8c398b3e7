// The operator's summary (core/reports.ts) from the ledger's per-day report: today at a glance,
// the budget left, and the last 7 days' payouts, days without any included.
import { describe, expect, it } from 'vitest';
import type { DayReport } from '../../../../src/relay/core/ports/ledger.js';
import { createReports } from '../../../../src/relay/core/reports.js';

const NOW = Date.parse('2026-11-25T22:00:00Z');
const rows: DayReport[] = [
  { day: '2026-11-19', state: 'paid', count: 1, sats: 5, players: 1 },
  { day: '2026-11-24', state: 'paid', count: 2, sats: 40, players: 2 },
  { day: '2026-11-25', state: 'paid', count: 3, sats: 63, players: 2 },
  { day: '2026-11-25', state: 'needs_review', count: 1, sats: 21, players: 1 },
  { day: '2026-11-25', state: 'rejected', count: 4, sats: 0, players: 3 },
];

function reportsOf(dailyBudgetSats: number) {
  const asked: string[] = [];
  const reports = createReports(
    {
      report: async (fromDay) => {
        asked.push(fromDay);
        return rows.filter((r) => r.day >= fromDay);
      },
      budgetUsed: async (day) => (day === '2026-11-25' ? 84 : 0),
    },
    { dailyBudgetSats },
  );
  return { reports, asked };
}

describe("the operator's summary", () => {
  it('today: sats paid, entries by state, players paid, and the budget used and left', async () => {
    const { reports, asked } = reportsOf(100);
    const { today } = await reports.summary(NOW);
    expect(asked).toEqual(['2026-11-19']);
    expect(today).toEqual({
      day: '2026-11-25',
      satsPaid: 63,
      byState: { paid: 3, needs_review: 1, rejected: 4 },
      playersPaid: 2,
      budget: { limit: 100, used: 84, left: 16 },
    });
  });

  it('the last 7 days, oldest first, a day with nothing paid as 0', async () => {
    const { reports } = reportsOf(100);
    expect((await reports.summary(NOW)).last7Days).toEqual([
      { day: '2026-11-19', satsPaid: 5 },
      { day: '2026-11-20', satsPaid: 0 },
      { day: '2026-11-21', satsPaid: 0 },
      { day: '2026-11-22', satsPaid: 0 },
      { day: '2026-11-23', satsPaid: 0 },
      { day: '2026-11-24', satsPaid: 40 },
      { day: '2026-11-25', satsPaid: 63 },
    ]);
  });

  it('without a daily budget, no limit and nothing left to say; past a lowered one, 0 left', async () => {
    expect((await reportsOf(0).reports.summary(NOW)).today.budget).toEqual({ limit: null, used: 84, left: null });
    expect((await reportsOf(50).reports.summary(NOW)).today.budget).toEqual({ limit: 50, used: 84, left: 0 });
  });
});
