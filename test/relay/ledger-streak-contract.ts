// Login streaks (issue 37) on a ledger: what every backend must decide alike, as one suite run
// with a factory for each backend (sqlite-ledger.test.ts, pg-ledger.test.ts). The ledger decides
// a streak's day and sats under its lock (core/streak.ts); the claim's time is the test's clock.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClaimLimits, Ledger, NewClaim, RelayStore } from '../../src/relay/index.js';

const NO_LIMITS: ClaimLimits = { userDailyCapSats: 0, dailyBudgetSats: 0 };
const DAY = 86_400_000;
/** Day n of the test's calendar (1: 2026-11-22), at 10:00 UTC, plus `ms`. */
const day = (n: number, ms = 0) => Date.parse('2026-11-22T10:00:00Z') + (n - 1) * DAY + ms;
const STEPS = [10, 20, 30, 50];

/** A streak's claim as the core makes it: its steps in its repeat rule, `sats` the first day's (the ledger decides). */
const login = (over: Partial<NewClaim> = {}): NewClaim => ({
  id: randomUUID(),
  userId: 'user-1',
  idempotencyKey: randomUUID(),
  requestHash: 'login',
  achievementId: 'login',
  sats: STEPS[0]!,
  repeat: { kind: 'streak', sats: STEPS },
  ...over,
});

/** Claims and pays a login on `at`: its state, sats and day. */
async function claimAndPay(l: Ledger, at: number, over: Partial<NewClaim> = {}) {
  const r = await l.claim(login(over), NO_LIMITS, at);
  if (r.entry.state === 'sending') await l.settle(r.entry.id, 'settle', { state: 'paid', paymentId: `tx-${r.entry.id}` }, { now: at });
  const e = (await l.get(r.entry.id))!;
  return { state: e.state, sats: e.sats, streakDay: e.terms?.streakDay, reason: e.reason };
}

export function streakContract(name: string, open: () => Promise<RelayStore>) {
  describe(`the ${name} ledger decides login streaks`, () => {
    const opened: RelayStore[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });
    const ledger = async () => {
      const s = await open();
      opened.push(s);
      return s.ledger;
    };

    it('pays day n its step (10, 20, 30, 50), the last step past the list, and starts again at day 1 after a missed day', async () => {
      const l = await ledger();
      const paid = [];
      for (const n of [1, 2, 3, 4, 5, 6]) paid.push(await claimAndPay(l, day(n)));
      expect(paid.map((p) => [p.state, p.sats, p.streakDay])).toEqual([
        ['paid', 10, 1],
        ['paid', 20, 2],
        ['paid', 30, 3],
        ['paid', 50, 4],
        ['paid', 50, 5],
        ['paid', 50, 6],
      ]);
      // Day 7 missed: day 8 is day 1 again, then the streak grows anew (a claim just after midnight counts on its day).
      expect(await claimAndPay(l, day(8))).toMatchObject({ state: 'paid', sats: 10, streakDay: 1 });
      expect(await claimAndPay(l, day(9, -10 * 3_600_000 + 1))).toMatchObject({ state: 'paid', sats: 20, streakDay: 2 });
      // The player's record carries the day, as the event told it.
      const history = await l.history('user-1', 10);
      expect(history.map((e) => e.terms?.streakDay)).toEqual([2, 1, 6, 5, 4, 3, 2, 1]);
      // Another player's streak is their own.
      expect(await claimAndPay(l, day(9), { userId: 'user-2' })).toMatchObject({ sats: 10, streakDay: 1 });
    });

    it("goes on from the player's streak after a guest's days are merged in (balance mode): the run counts both, the merged credits keep their sats", async () => {
      const l = await ledger();
      if (!l.mergeGuest) return;
      const credit = (n: number, userId: string) => l.claim(login({ userId, credit: true }), NO_LIMITS, day(n));
      for (const n of [1, 2, 3]) expect((await credit(n, 'user-1')).entry).toMatchObject({ state: 'credited', terms: { streakDay: n } });
      // On a new device, as a guest, days 4 and 5: the guest's days 1 and 2.
      for (const n of [4, 5]) expect((await credit(n, 'guest_1')).entry).toMatchObject({ state: 'credited', sats: STEPS[n - 4], terms: { streakDay: n - 3 } });
      const merged = await l.mergeGuest(
        'guest_1',
        'user-1',
        { repeats: new Map([['login', login().repeat]]), limits: NO_LIMITS },
        { actor: 'player:ada', action: 'merge guest_1' },
        day(5, 60_000),
      );
      expect(merged.moved.map((s) => [s.entry.sats, s.entry.terms?.streakDay])).toEqual([
        [10, 1],
        [20, 2],
      ]);
      // Day 6 is the player's sixth day running, not the guest's third.
      expect((await credit(6, 'user-1')).entry).toMatchObject({ state: 'credited', sats: 50, terms: { streakDay: 6 } });
      // A day missed still starts again.
      expect((await credit(8, 'user-1')).entry).toMatchObject({ sats: 10, terms: { streakDay: 1 } });
    });

    it('refuses a second claim the same UTC day (already_claimed_today): it reserves and pays nothing', async () => {
      const l = await ledger();
      await claimAndPay(l, day(1));
      await claimAndPay(l, day(2));
      const again = await l.claim(login(), NO_LIMITS, day(2, 13 * 3_600_000));
      expect(again).toMatchObject({ kind: 'created', entry: { state: 'rejected', reason: 'already_claimed_today' } });
      expect(again.kind === 'created' && again.event?.data).toMatchObject({ status: 'rejected', reason: 'already_claimed_today' });
      expect(await l.budgetUsed('2026-11-23')).toBe(20);
      // The refusal is no day of the streak: the next day goes on from day 2.
      expect(await claimAndPay(l, day(3))).toMatchObject({ sats: 30, streakDay: 3 });
    });

    it("does not count a failed or refused claim as the day claimed: the day's retry pays the day, and a day without one breaks the streak", async () => {
      const l = await ledger();
      await claimAndPay(l, day(1));
      // Day 2's payment fails: day 2 is not claimed yet; a retry (a new intent) the same day pays day 2.
      const failed = await l.claim(login(), NO_LIMITS, day(2));
      expect(failed.entry).toMatchObject({ state: 'sending', sats: 20, terms: { streakDay: 2 } });
      await l.settle(failed.entry.id, 'settle', { state: 'failed', reason: 'payment_refused' }, { now: day(2) });
      expect(await claimAndPay(l, day(2, 60_000))).toMatchObject({ state: 'paid', sats: 20, streakDay: 2 });
      expect(await claimAndPay(l, day(3))).toMatchObject({ sats: 30, streakDay: 3 });
      // Another player's day 2 refused by the cap (20 > 15): not claimed, so their day 3 starts again at day 1.
      expect((await l.claim(login({ userId: 'user-2' }), { ...NO_LIMITS, userDailyCapSats: 25 }, day(1))).entry.state).toBe('sending');
      const capped = await l.claim(login({ userId: 'user-2' }), { ...NO_LIMITS, userDailyCapSats: 15 }, day(2));
      expect(capped.entry).toMatchObject({ state: 'rejected', reason: 'user_daily_cap', sats: 20 });
      expect(await claimAndPay(l, day(3), { userId: 'user-2' })).toMatchObject({ state: 'paid', sats: 10, streakDay: 1 });
    });

    it('counts the decided sats on the cap and budget, holds a day above the hold limit (a held day counts; a denied one does not), credits in balance mode', async () => {
      const l = await ledger();
      const budget = { ...NO_LIMITS, dailyBudgetSats: 25 };
      expect((await l.claim(login(), budget, day(1))).entry).toMatchObject({ state: 'sending', sats: 10 });
      expect((await l.claim(login({ userId: 'user-2' }), budget, day(1))).entry.state).toBe('sending');
      expect(await l.budgetUsed('2026-11-22')).toBe(20);
      // Day 2 for user-1 is worth 20: the budget (25) has room for one, not for user-2's second.
      expect((await l.claim(login(), budget, day(2))).entry).toMatchObject({ state: 'sending', sats: 20 });
      expect((await l.claim(login({ userId: 'user-2' }), budget, day(2))).entry).toMatchObject({ state: 'rejected', reason: 'daily_budget', sats: 20 });
      expect(await l.budgetUsed('2026-11-23')).toBe(20);

      // Held when the day's sats are above the limit (the core passes RELAY_HOLD_ABOVE_SATS): day 1 is not, day 2 is.
      const hold = { holdAboveSats: 15, userId: 'user-3' };
      expect((await l.claim(login(hold), NO_LIMITS, day(1))).entry).toMatchObject({ state: 'sending', sats: 10 });
      const held = await l.claim(login(hold), NO_LIMITS, day(2));
      expect(held.entry).toMatchObject({ state: 'held', sats: 20, terms: { streakDay: 2 } });
      // Held, the day is claimed (reserving): a second claim that day is refused.
      expect((await l.claim(login(hold), NO_LIMITS, day(2, 1000))).entry.reason).toBe('already_claimed_today');
      await l.settle(held.entry.id, 'deny', { state: 'rejected', reason: 'denied_by_operator' }, { now: day(2, 2000), audit: { actor: 'ops', action: 'deny' } });
      // Denied: day 2 was never claimed, so day 3 starts again.
      expect((await l.claim(login(hold), NO_LIMITS, day(3))).entry).toMatchObject({ state: 'sending', sats: 10, terms: { streakDay: 1 } });

      // Balance mode: credited like any claim, at the day's sats.
      const credit = { credit: true, userId: 'user-4' };
      expect((await l.claim(login(credit), NO_LIMITS, day(1))).entry).toMatchObject({ state: 'credited', kind: 'credit', sats: 10 });
      expect((await l.claim(login(credit), NO_LIMITS, day(2))).entry).toMatchObject({ state: 'credited', sats: 20, terms: { streakDay: 2 } });
      expect((await l.balance!('user-4', day(2))).creditedSats).toBe(30);
    });

    it("lets exactly one of a day's racing claims through, at the day's step, whatever the others' keys", async () => {
      const l = await ledger();
      await claimAndPay(l, day(1));
      const raced = await Promise.all(Array.from({ length: 8 }, (_, i) => l.claim(login(), NO_LIMITS, day(2, i))));
      const won = raced.filter((r) => r.entry.state === 'sending');
      expect(won.map((r) => [r.entry.sats, r.entry.terms?.streakDay])).toEqual([[20, 2]]);
      expect(raced.filter((r) => r.entry.reason === 'already_claimed_today')).toHaveLength(7);
      expect(await l.budgetUsed('2026-11-23')).toBe(20);
    });

    it("holds the player's cap exactly when a streak's claim races the player's other claims (PostgreSQL: the streak alone, the others grouped)", async () => {
      const l = await ledger();
      const cap = { ...NO_LIMITS, userDailyCapSats: 25 };
      const coin = (i: number): NewClaim => ({ ...login(), achievementId: 'coin', sats: 15, repeat: { kind: 'cooldown', seconds: 0 }, requestHash: `coin-${i}` });
      const raced = await Promise.all([l.claim(login(), cap, day(1)), ...[0, 1, 2].map((i) => l.claim(coin(i), cap, day(1, i)))]);
      const reserved = raced.filter((r) => r.entry.state === 'sending').reduce((sum, r) => sum + r.entry.sats, 0);
      // 10 (the streak's day 1) + 15 fit the cap of 25, two coins (30) do not: in any order, the streak and one coin.
      expect(reserved).toBe(25);
      expect(
        raced
          .filter((r) => r.entry.state === 'sending')
          .map((r) => r.entry.achievementId)
          .sort(),
      ).toEqual(['coin', 'login']);
      expect(raced.filter((r) => r.entry.reason === 'user_daily_cap')).toHaveLength(2);
    });

    it('answers a replayed key with its entry, day and sats as they were decided', async () => {
      const l = await ledger();
      await claimAndPay(l, day(1));
      const c = login();
      const first = await l.claim(c, NO_LIMITS, day(2));
      expect(first.entry).toMatchObject({ sats: 20, terms: { streakDay: 2 } });
      const replay = await l.claim({ ...c, id: randomUUID() }, NO_LIMITS, day(5));
      expect(replay).toMatchObject({ kind: 'existing', entry: { id: c.id, sats: 20, terms: { streakDay: 2 } } });
    });

    it("pays a step in dollars (issue 38) its sats at the price its claim carries, on each day's own price, recorded with usd and btcUsd", async () => {
      const l = await ledger();
      // Day 1 $0.05, day 2 $0.10, day 3 on 30 sats; the core puts the price it fetched in the claim's terms.
      const dollars = (btcUsd: number): Partial<NewClaim> => ({ repeat: { kind: 'streak', sats: [{ usd: 0.05 }, { usd: 0.1 }, 30] }, terms: { btcUsd } });
      const paid = [await claimAndPay(l, day(1), dollars(65_000)), await claimAndPay(l, day(2), dollars(50_000)), await claimAndPay(l, day(3), dollars(40_000))];
      expect(paid.map((p) => [p.state, p.sats, p.streakDay])).toEqual([
        ['paid', 77, 1],
        ['paid', 200, 2],
        ['paid', 30, 3],
      ]);
      const entries = (await l.history('user-1', 10)).sort((x, y) => x.createdAt - y.createdAt);
      expect(entries.map((e) => e.terms)).toEqual([
        { usd: 0.05, btcUsd: 65_000, streakDay: 1 },
        { usd: 0.1, btcUsd: 50_000, streakDay: 2 },
        // A sats step at a price is valued at it (30 sats at $40,000: $0.012).
        { usd: 0.012, btcUsd: 40_000, streakDay: 3 },
      ]);
    });
  });
}
