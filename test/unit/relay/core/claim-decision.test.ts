// The claim's decision, pure: what both ledgers ask once they have read a claim's facts under
// their locks (core/claim-decision.ts). The ledgers' own tests check they read the facts right.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ClaimFacts,
  claimedState,
  countsDollars,
  dayRefusal,
  factsRead,
  keyDecision,
  mergeDecider,
  mergeRefusal,
  refusal,
  tooEarly,
} from '../../../../src/relay/core/claim-decision.js';
import type { ClaimLimits, Repeat } from '../../../../src/relay/core/ports/ledger.js';

const T = Date.parse('2026-11-25T12:00:00Z');
const NONE = { userDailyCapSats: 0, dailyBudgetSats: 0 };
const facts = (over = {}) => ({ lastReservingAt: undefined, userSats: 0, projectSats: 0, ...over });
const once = { repeat: { kind: 'once' as const }, sats: 21 };

describe('the claim decision', () => {
  it('a known key is its own answer, unless it was deferred and comes with the same body: then it is decided afresh', () => {
    expect(keyDecision(undefined, { requestHash: 'a' })).toBe('insert');
    expect(keyDecision({ state: 'paid', requestHash: 'a' }, { requestHash: 'a' })).toBe('existing');
    expect(keyDecision({ state: 'deferred', requestHash: 'a' }, { requestHash: 'a' })).toBe('reclaim');
    expect(keyDecision({ state: 'deferred', requestHash: 'a' }, { requestHash: 'b' })).toBe('existing');
  });

  it('a claim before its play time is due at the session start plus the play time, and not after', () => {
    expect(tooEarly({ playStartedAt: T, minPlayMs: 3000 }, T + 2999)).toBe(T + 3000);
    expect(tooEarly({ playStartedAt: T, minPlayMs: 3000 }, T + 3000)).toBeUndefined();
    expect(tooEarly({}, T)).toBeUndefined();
  });

  it('refuses in order: the game’s own check, a spent proof, the repeat policy, the player cap, the budget, the address cap', () => {
    const all = { rejectReason: 'claim_not_verified', address: 'a:1', ...once, sats: 50 };
    const full = facts({ proofUsed: true, lastReservingAt: T - 1, userSats: 100, projectSats: 100, addressSats: 100 });
    const limits = { userDailyCapSats: 100, dailyBudgetSats: 100, addressDailyCapSats: 100 };
    expect(refusal(all, full, limits, T)).toBe('claim_not_verified');
    const { rejectReason: _r, ...noCheck } = all;
    expect(refusal(noCheck, full, limits, T)).toBe('proof_used');
    expect(refusal(noCheck, { ...full, proofUsed: false }, limits, T)).toBe('already_claimed');
    expect(refusal(noCheck, { ...full, proofUsed: false, lastReservingAt: undefined }, limits, T)).toBe('user_daily_cap');
    expect(refusal(noCheck, { ...full, proofUsed: false, lastReservingAt: undefined, userSats: 0 }, limits, T)).toBe('daily_budget');
    expect(refusal(noCheck, facts({ addressSats: 60 }), limits, T)).toBe('address_daily_cap');
    expect(refusal(noCheck, facts({ addressSats: 50, userSats: 50, projectSats: 50 }), limits, T)).toBeUndefined();
  });

  it('holds a cap exactly at its edge, and 0 means no cap', () => {
    const limits = { userDailyCapSats: 100, dailyBudgetSats: 0 };
    expect(refusal(once, facts({ userSats: 79 }), limits, T)).toBeUndefined();
    expect(refusal(once, facts({ userSats: 80 }), limits, T)).toBe('user_daily_cap');
    expect(refusal(once, facts({ userSats: 10_000, projectSats: 10_000 }), NONE, T)).toBeUndefined();
  });

  it('a decided claim is rejected with a reason, held when asked, or on its way to be paid', () => {
    expect(claimedState('daily_budget', { hold: true })).toBe('rejected');
    expect(claimedState(undefined, { hold: true })).toBe('held');
    expect(claimedState(undefined)).toBe('sending');
  });

  it("an approval on a later day is checked against that day's cap, budget and address cap", () => {
    const limits = { userDailyCapSats: 100, dailyBudgetSats: 1000, addressDailyCapSats: 50 };
    expect(dayRefusal({ sats: 60 }, { userSats: 50, projectSats: 0 }, limits)).toBe('user_daily_cap');
    expect(dayRefusal({ sats: 60 }, { userSats: 0, projectSats: 950 }, limits)).toBe('daily_budget');
    expect(dayRefusal({ sats: 60, address: 'a:1' }, { userSats: 0, projectSats: 0, addressSats: 0 }, limits)).toBe('address_daily_cap');
    expect(dayRefusal({ sats: 40 }, { userSats: 60, projectSats: 960, addressSats: 10 }, limits)).toBeUndefined();
  });

  it("a guest's merged credit is refused by the player's repeat rule: once any, daily by UTC day (its edges), cooldown within it", () => {
    const midnight = Date.parse('2026-11-22T00:00:00.000Z');
    expect(mergeRefusal(undefined, midnight, [midnight])).toBeUndefined();
    expect(mergeRefusal({ kind: 'once' }, midnight, [])).toBeUndefined();
    expect(mergeRefusal({ kind: 'once' }, midnight, [midnight - 86_400_000])).toBe('already_claimed');
    expect(mergeRefusal({ kind: 'daily' }, midnight, [midnight - 1])).toBeUndefined();
    expect(mergeRefusal({ kind: 'daily' }, midnight - 1, [midnight - 86_400_000])).toBe('already_claimed_today');
    expect(mergeRefusal({ kind: 'daily' }, midnight + 86_399_999, [midnight - 1, midnight])).toBe('already_claimed_today');
    expect(mergeRefusal({ kind: 'cooldown', seconds: 60 }, midnight, [midnight - 60_000, midnight + 60_000])).toBeUndefined();
    expect(mergeRefusal({ kind: 'cooldown', seconds: 60 }, midnight, [midnight + 59_999])).toBe('cooldown');
    expect(mergeRefusal({ kind: 'cooldown', seconds: 0 }, midnight, [midnight])).toBeUndefined();
  });
  it("holds a merge to the player's cap on each credit's day, in sats or dollars, counting each credit it moves; a used key or the repeat rule first", () => {
    const day = '2026-11-22';
    const credit = (over = {}) => ({ achievementId: 'coin', at: T, day, sats: 40, usdMicros: 20_000, used: false, ...over });
    const repeats = new Map<string, Repeat>([
      ['coin', { kind: 'cooldown', seconds: 0 }],
      ['first', { kind: 'once' }],
    ]);
    const reads: string[] = [];
    const holds = {
      times: (a: string) => (a === 'first' ? [T - 1] : []),
      day: (d: string) => {
        reads.push(d);
        return d === day ? { userSats: 30, userUsdMicros: 15_000 } : { userSats: 0, userUsdMicros: 0 };
      },
    };
    // A cap of 100 sats, 30 held: 40 moves (70), the next 40 does not fit, a 30 does (100); another day has its own cap.
    const sats = mergeDecider(repeats, { userDailyCapSats: 100, dailyBudgetSats: 0 }, holds);
    expect([credit(), credit(), credit({ sats: 30 }), credit({ sats: 1 }), credit({ day: '2026-11-23', sats: 100 })].map(sats)).toEqual([
      undefined,
      'user_daily_cap',
      undefined,
      'user_daily_cap',
      undefined,
    ]);
    expect(reads).toEqual([day, '2026-11-23']);
    // Precedence: a used key, then the repeat rule, then the cap.
    expect(sats(credit({ used: true }))).toBe('already_claimed');
    expect(sats(credit({ achievementId: 'first', sats: 1_000 }))).toBe('already_claimed');
    // In dollars: $0.05 a day, $0.015 held: $0.02 moves, the next $0.02 does not fit.
    // A tournament's prize moves past the cap (never refused by it), and is counted: a credit after it no longer fits.
    const prized = mergeDecider(repeats, { userDailyCapSats: 100, dailyBudgetSats: 0 }, holds, new Set(['cup']));
    expect([credit({ achievementId: 'cup', sats: 1_000 }), credit({ sats: 1 })].map(prized)).toEqual([undefined, 'user_daily_cap']);
    const usd = mergeDecider(repeats, { userDailyCapSats: 0, dailyBudgetSats: 0, userDailyCapUsd: 0.05 }, holds);
    expect([credit(), credit(), credit({ usdMicros: 15_000 })].map(usd)).toEqual([undefined, 'user_daily_cap', undefined]);
    // No cap: every day is left unread, and everything moves.
    reads.length = 0;
    const none = mergeDecider(repeats, NONE, holds);
    expect([credit({ sats: 10_000 }), credit({ sats: 10_000 })].map(none)).toEqual([undefined, undefined]);
    expect(reads).toEqual([]);
  });
  it('reads only the facts the rules read: the same decision with every other fact left unread (0, none)', () => {
    const H = 3_600_000;
    const repeat: fc.Arbitrary<Repeat> = fc.oneof(
      fc.constant({ kind: 'once' as const }),
      fc.constant({ kind: 'daily' as const }),
      fc.integer({ min: 0, max: 7200 }).map((seconds) => ({ kind: 'cooldown' as const, seconds })),
      fc.constant<Repeat>({ kind: 'streak', sats: [10, 20] }),
    );
    const off = <T>(a: fc.Arbitrary<T>) => fc.oneof(fc.constant(0), a);
    const limits: fc.Arbitrary<ClaimLimits> = fc.record({
      userDailyCapSats: off(fc.integer({ min: 1, max: 500 })),
      dailyBudgetSats: off(fc.integer({ min: 1, max: 500 })),
      addressDailyCapSats: off(fc.integer({ min: 1, max: 500 })),
      denialCooldownHours: off(fc.integer({ min: 1, max: 48 })),
      userDailyCapUsd: off(fc.double({ min: 0.01, max: 5, noNaN: true })),
      dailyBudgetUsd: off(fc.double({ min: 0.01, max: 5, noNaN: true })),
    });
    const claim = fc.record({
      repeat,
      sats: fc.integer({ min: 1, max: 300 }),
      address: fc.option(fc.constant('203.0.113.7'), { nil: undefined }),
      terms: fc.option(
        fc.double({ min: 0.001, max: 3, noNaN: true }).map((usd) => ({ usd })),
        { nil: undefined },
      ),
    });
    // What a ledger may find; a claim's time is never before the last one it read (PostgreSQL moves it up to it).
    const found = fc.record({
      sinceLast: fc.option(fc.integer({ min: 0, max: 3 * 24 * H }), { nil: undefined }),
      sinceDenied: fc.option(fc.integer({ min: 0, max: 3 * 24 * H }), { nil: undefined }),
      userSats: fc.integer({ min: 0, max: 600 }),
      projectSats: fc.integer({ min: 0, max: 600 }),
      addressSats: fc.integer({ min: 0, max: 600 }),
      userUsdMicros: fc.integer({ min: 0, max: 6_000_000 }),
      projectUsdMicros: fc.integer({ min: 0, max: 6_000_000 }),
      proofUsed: fc.boolean(),
    });
    fc.assert(
      fc.property(claim, limits, found, fc.integer({ min: 0, max: 24 * H }), (c, l, f, ms) => {
        const now = T + ms;
        const all: ClaimFacts = {
          lastReservingAt: f.sinceLast === undefined ? undefined : now - f.sinceLast,
          userSats: f.userSats,
          projectSats: f.projectSats,
          addressSats: f.addressSats,
          userUsdMicros: f.userUsdMicros,
          projectUsdMicros: f.projectUsdMicros,
          proofUsed: f.proofUsed,
          lastDeniedAt: f.sinceDenied === undefined ? undefined : now - f.sinceDenied,
        };
        const r = factsRead(c, l);
        const read: ClaimFacts = {
          lastReservingAt: r.lastReserving ? all.lastReservingAt : undefined,
          userSats: r.userSats ? all.userSats : 0,
          projectSats: r.projectSats ? all.projectSats : 0,
          addressSats: r.addressSats ? all.addressSats : 0,
          ...(countsDollars(l) ? { userUsdMicros: all.userUsdMicros, projectUsdMicros: all.projectUsdMicros } : {}),
          proofUsed: f.proofUsed,
          lastDeniedAt: r.lastDenied ? all.lastDeniedAt : undefined,
        };
        expect(refusal(c, read, l, now)).toBe(refusal(c, all, l, now));
      }),
      { numRuns: 2000 },
    );
  });
});
