import type { RepeatPolicy } from './relay-api.js';

// The earning rules, in one pure module: the relay's ledgers apply them (for good, under their
// own locks) and the client applies them first (so no request is wasted). Adding a repeat
// policy touches this module, the RepeatPolicy wire type and the catalog schema.

const DAY_MS = 86_400_000;

/** The UTC day of an instant, `YYYY-MM-DD`: the period caps, budgets and daily repeats count in. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** When the UTC day after this instant's starts (ms). */
export const nextUtcDay = (ms: number): number => (Math.floor(ms / DAY_MS) + 1) * DAY_MS;

export type RepeatRefusal = 'already_claimed' | 'already_claimed_today' | 'cooldown';
export type LimitRefusal = 'user_daily_cap' | 'daily_budget';

/** Why the player cannot earn it again yet, by its repeat policy and when they last earned it (ms). */
export function repeatBlock(repeat: RepeatPolicy | { kind: 'streak' }, lastEarnedAt: number | undefined, now: number): { reason: RepeatRefusal; retryAt?: number } | undefined {
  if (lastEarnedAt === undefined) return undefined;
  switch (repeat.kind) {
    case 'once':
      return { reason: 'already_claimed' };
    // A streak is a daily claim whose amount grows (core/streak.ts decides it in the relay).
    case 'daily':
    case 'streak':
      return utcDay(lastEarnedAt) === utcDay(now) ? { reason: 'already_claimed_today', retryAt: nextUtcDay(now) } : undefined;
    case 'cooldown': {
      const retryAt = lastEarnedAt + repeat.seconds * 1000;
      return now < retryAt ? { reason: 'cooldown', retryAt } : undefined;
    }
  }
}

export interface DailyLimits {
  /** Per userId, per UTC day. 0: no cap. */
  userDailyCapSats: number;
  /** The whole project, per UTC day. 0: no budget. */
  dailyBudgetSats: number;
}

/** Whether `sats` more fit the player's cap and the project's budget, given what is reserved today. */
export function limitBlock(sats: number, reserved: { user: number; project: number }, limits: DailyLimits): LimitRefusal | undefined {
  if (limits.userDailyCapSats > 0 && reserved.user + sats > limits.userDailyCapSats) return 'user_daily_cap';
  if (limits.dailyBudgetSats > 0 && reserved.project + sats > limits.dailyBudgetSats) return 'daily_budget';
  return undefined;
}
