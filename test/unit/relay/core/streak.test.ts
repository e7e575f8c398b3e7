import { describe, expect, it } from 'vitest';
import type { NewClaim } from '../../../../src/relay/core/ports/ledger.js';
import { decideStreak, streakDay, streakLastOf, streakSats } from '../../../../src/relay/core/streak.js';

const at = (iso: string) => Date.parse(iso);
const claim: NewClaim = { id: 'c', userId: 'u', idempotencyKey: 'k', requestHash: 'h', achievementId: 'login', sats: 10, repeat: { kind: 'streak', sats: [10, 20, 30, 50] } };

describe('a login streak decided (core/streak.ts)', () => {
  it("counts UTC days from the last reserving entry's day and streakDay: the next day goes on, a missed day starts again", () => {
    expect(streakDay(undefined, at('2026-11-22T10:00:00Z'))).toBe(1);
    const last = { at: at('2026-11-22T23:59:59Z'), terms: { streakDay: 3 } };
    // The same UTC day: that day's (the repeat rule refuses it).
    expect(streakDay(last, at('2026-11-22T23:59:59.500Z'))).toBe(3);
    // Just past midnight UTC is the next day, however close.
    expect(streakDay(last, at('2026-11-23T00:00:00Z'))).toBe(4);
    expect(streakDay(last, at('2026-11-23T23:59:59Z'))).toBe(4);
    expect(streakDay(last, at('2026-11-24T00:00:00Z'))).toBe(1);
    // An entry without a day (an achievement made a streak since) counts as day 1.
    expect(streakDay({ at: last.at, terms: null }, at('2026-11-23T08:00:00Z'))).toBe(2);
  });

  it("reads the last day from the player's last entries: the newest's day, or the run they make up to it (a guest's days merged in)", () => {
    const e = (iso: string, streakDay: number) => ({ at: at(iso), terms: { streakDay } });
    expect(streakLastOf([])).toBeUndefined();
    // A player's own entries: the newest's day, whatever came before.
    const own = [e('2026-11-24T10:00:00Z', 1), e('2026-11-22T10:00:00Z', 7)];
    expect(streakLastOf(own)).toBe(own[0]);
    // The player's day 5, then a guest's days 1 and 2 merged in: the run is 7.
    const merged = [e('2026-11-24T09:00:00Z', 2), e('2026-11-23T09:00:00Z', 1), e('2026-11-22T09:00:00Z', 5)];
    expect(streakLastOf(merged)).toEqual({ at: merged[0]!.at, terms: { streakDay: 7 } });
    // Two entries on one day (the player's and a guest's): the longer.
    expect(streakLastOf([e('2026-11-23T12:00:00Z', 1), e('2026-11-23T08:00:00Z', 4)])?.terms?.streakDay).toBe(4);
    // A guest's longer streak merged after the player's shorter one: the guest's.
    expect(streakLastOf([e('2026-11-23T12:00:00Z', 9), e('2026-11-22T08:00:00Z', 2)])?.terms?.streakDay).toBe(9);
  });

  it('pays the day its step, the last step past the list', () => {
    expect([1, 2, 3, 4, 5, 60].map((d) => streakSats([10, 20, 30, 50], d))).toEqual([10, 20, 30, 50, 50, 50]);
    expect(streakSats([7], 9)).toBe(7);
  });

  it("decides a streak's claim: its sats, its day on its terms, a hold above the limit; another claim is left as it is", () => {
    const last = { at: at('2026-11-22T10:00:00Z'), terms: { streakDay: 1 } };
    expect(decideStreak(claim, last, at('2026-11-23T10:00:00Z'))).toEqual({ ...claim, sats: 20, terms: { streakDay: 2 } });
    expect(decideStreak({ ...claim, holdAboveSats: 15 }, last, at('2026-11-23T10:00:00Z'))).toMatchObject({ sats: 20, hold: true });
    expect(decideStreak({ ...claim, holdAboveSats: 15 }, undefined, at('2026-11-23T10:00:00Z'))).not.toHaveProperty('hold');
    expect(decideStreak({ ...claim, terms: { usd: 0.01 } }, undefined, 0).terms).toEqual({ usd: 0.01, streakDay: 1 });
    const daily = { ...claim, repeat: { kind: 'daily' as const } };
    expect(decideStreak(daily, last, at('2026-11-23T10:00:00Z'))).toBe(daily);
  });

  it('holds no day an operator approved before an outage deferred it, unless it is now decided at more sats', () => {
    const last = { at: at('2026-11-22T10:00:00Z'), terms: { streakDay: 1 } };
    const day2 = at('2026-11-23T10:00:00Z');
    // Day 2 pays 20, above the limit: approved at 20 (or more), it is not held again; approved at 15, it is.
    expect(decideStreak({ ...claim, holdAboveSats: 15, approvedSats: 20 }, last, day2)).not.toHaveProperty('hold');
    expect(decideStreak({ ...claim, holdAboveSats: 15, approvedSats: 25 }, last, day2)).not.toHaveProperty('hold');
    expect(decideStreak({ ...claim, holdAboveSats: 15, approvedSats: 15 }, last, day2)).toMatchObject({ sats: 20, hold: true });
    // A streak the catalog holds whatever its sats: the same rule.
    expect(decideStreak({ ...claim, hold: true, approvedSats: 20 }, last, day2)).not.toHaveProperty('hold');
    expect(decideStreak({ ...claim, hold: true, approvedSats: 10 }, last, day2)).toMatchObject({ sats: 20, hold: true });
  });
});
