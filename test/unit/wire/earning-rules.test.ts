import { describe, expect, it } from 'vitest';
import { limitBlock, nextUtcDay, repeatBlock, utcDay } from '../../../src/wire/earning-rules.js';

const at = (iso: string) => Date.parse(iso);

describe('the earning rules (one module, for the client and every ledger)', () => {
  it('once: never again after it was earned', () => {
    expect(repeatBlock({ kind: 'once' }, undefined, at('2026-11-22T10:00:00Z'))).toBeUndefined();
    expect(repeatBlock({ kind: 'once' }, at('2020-01-01T00:00:00Z'), at('2026-11-22T10:00:00Z'))).toEqual({ reason: 'already_claimed' });
  });

  it('daily: once per UTC day, again from the next UTC midnight', () => {
    const last = at('2026-11-22T23:59:59.999Z');
    expect(repeatBlock({ kind: 'daily' }, last, at('2026-11-22T23:59:59.999Z'))).toEqual({ reason: 'already_claimed_today', retryAt: at('2026-11-23T00:00:00Z') });
    expect(repeatBlock({ kind: 'daily' }, last, at('2026-11-23T00:00:00Z'))).toBeUndefined();
    expect(repeatBlock({ kind: 'daily' }, at('2026-11-22T00:00:00Z'), at('2026-11-22T23:00:00Z'))?.reason).toBe('already_claimed_today');
    // A login streak is claimed as a daily one (its amount is the relay's to decide).
    const streak = { kind: 'streak', sats: [10, 20] } as const;
    expect(repeatBlock({ ...streak, sats: [10, 20] }, last, at('2026-11-22T23:59:59.999Z'))).toEqual({ reason: 'already_claimed_today', retryAt: at('2026-11-23T00:00:00Z') });
    expect(repeatBlock({ ...streak, sats: [10, 20] }, last, at('2026-11-23T00:00:00Z'))).toBeUndefined();
  });

  it('cooldown: again once the seconds have passed, to the millisecond', () => {
    const last = at('2026-11-22T10:00:00Z');
    expect(repeatBlock({ kind: 'cooldown', seconds: 30 }, last, last + 29_999)).toEqual({ reason: 'cooldown', retryAt: last + 30_000 });
    expect(repeatBlock({ kind: 'cooldown', seconds: 30 }, last, last + 30_000)).toBeUndefined();
    expect(repeatBlock({ kind: 'cooldown', seconds: 0 }, last, last)).toBeUndefined();
  });

  it("caps the player's day and the project's budget exactly at their limits; 0 means none", () => {
    const limits = { userDailyCapSats: 100, dailyBudgetSats: 1000 };
    expect(limitBlock(21, { user: 79, project: 0 }, limits)).toBeUndefined();
    expect(limitBlock(21, { user: 80, project: 0 }, limits)).toBe('user_daily_cap');
    expect(limitBlock(21, { user: 0, project: 979 }, limits)).toBeUndefined();
    expect(limitBlock(21, { user: 0, project: 980 }, limits)).toBe('daily_budget');
    expect(limitBlock(1e9, { user: 1e9, project: 1e9 }, { userDailyCapSats: 0, dailyBudgetSats: 0 })).toBeUndefined();
  });

  it('counts days in UTC, whatever the local time zone', () => {
    expect(utcDay(at('2026-11-22T23:30:00-05:00'))).toBe('2026-11-23');
    expect(nextUtcDay(at('2026-11-22T12:00:00Z'))).toBe(at('2026-11-23T00:00:00Z'));
  });
});
