// What every ledger backend must do in balance mode (issue 36), as one suite: run it with a factory for each backend.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { BalanceFacts, NewWithdrawal, WithdrawalLimits } from '../../src/relay/core/ports/ledger.js';
import { toRewardRecord } from '../../src/relay/core/reward-record.js';
import type { ClaimLimits, Ledger, NewClaim, RelayStore, RewardRecord } from '../../src/relay/index.js';

const NO_LIMITS: ClaimLimits = { userDailyCapSats: 0, dailyBudgetSats: 0 };
const OPEN: WithdrawalLimits = { minWithdrawalSats: 10, dailyLimitSats: 0, allowancePerPlayMinuteSats: 0, allowanceStartSats: 0, holdAboveSats: 0 };
const T0 = Date.parse('2026-11-22T10:00:00Z');
const DAY = 86_400_000;
const USER = 'user-1';

/** A credit claim: decided as any claim, credited to the player's balance. */
const credit = (over: Partial<NewClaim> = {}): NewClaim => ({
  id: randomUUID(),
  userId: USER,
  idempotencyKey: randomUUID(),
  requestHash: 'hash-a',
  achievementId: 'coin',
  sats: 100,
  repeat: { kind: 'cooldown', seconds: 0 },
  credit: true,
  ...over,
});

const withdrawal = (over: Partial<NewWithdrawal> = {}): NewWithdrawal => ({ id: randomUUID(), userId: USER, idempotencyKey: randomUUID(), requestHash: 'w-hash', ...over });

/** The facts, with nothing of play or raises unless given. */
const facts = (over: Partial<BalanceFacts>): BalanceFacts => ({ creditedSats: 0, withdrawnSats: 0, withdrawnTodaySats: 0, playMs: 0, raisedSats: 0, ...over });

export function balanceLedgerContract(name: string, open: () => Promise<RelayStore>) {
  describe(`the ${name} ledger keeps the balance-mode contract`, () => {
    const opened: RelayStore[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });
    const store = async () => {
      const s = await open();
      opened.push(s);
      return s;
    };
    const ledger = async () => (await store()).ledger;
    /** A refusal: thrown, with its reason, and nothing written (the player's entries and balance as they were). */
    async function refused(l: Ledger, w: NewWithdrawal, limits: WithdrawalLimits, reason: string, now = T0) {
      const before = [await l.history(w.userId, 100), await l.balance!(w.userId, now)];
      await expect(l.withdraw!(w, limits, now)).rejects.toMatchObject({ name: 'WithdrawalRefusal', reason, facts: before[1] });
      expect([await l.history(w.userId, 100), await l.balance!(w.userId, now)]).toEqual(before);
      expect(await l.find(w.userId, w.idempotencyKey)).toBeUndefined();
    }

    it("records a credit claim as credited: reserved against the player's cap and the budget, on the balance, and told as credited", async () => {
      const { ledger: l, events } = await store();
      const limits = { userDailyCapSats: 50, dailyBudgetSats: 60 };
      const first = await l.claim(credit({ sats: 25 }), limits, T0);
      expect(first).toMatchObject({ kind: 'created', entry: { state: 'credited', kind: 'credit', sats: 25 }, event: { type: 'reward', data: { status: 'credited' } } });
      expect(first.entry).not.toHaveProperty('phase');
      expect(first.kind === 'created' && first.event?.data).toEqual(toRewardRecord(first.entry));
      expect((await l.claim(credit({ sats: 25 }), limits, T0)).entry.state).toBe('credited');
      expect((await l.claim(credit({ sats: 1 }), limits, T0)).entry).toMatchObject({ state: 'rejected', reason: 'user_daily_cap' });
      expect((await l.claim(credit({ userId: 'user-2', sats: 25 }), limits, T0)).entry).toMatchObject({ state: 'rejected', reason: 'daily_budget' });
      expect(await l.budgetUsed('2026-11-22')).toBe(50);
      expect(await l.balance!(USER, T0)).toEqual(facts({ creditedSats: 50 }));
      // Nothing to send: recovery leaves it alone, and it is no payment's.
      expect(await l.abandoned(T0 + 365 * DAY, T0 + 365 * DAY)).toEqual([]);
      expect(await l.markSent(first.entry.id)).toBe(false);
      expect((await events.since(USER, 0)).map((e) => (e.data as RewardRecord).status)).toEqual(['credited', 'credited', 'rejected']);
    });

    it('holds a credit for an operator (reserved, not yet on the balance); approved, held → credited, once', async () => {
      const { ledger: l, events } = await store();
      const limits = { userDailyCapSats: 0, dailyBudgetSats: 100 };
      const held = await l.claim(credit({ sats: 30, hold: true }), limits, T0);
      expect(held.entry).toMatchObject({ state: 'held', kind: 'credit' });
      expect(await l.budgetUsed('2026-11-22')).toBe(30);
      expect((await l.balance!(USER, T0)).creditedSats).toBe(0);
      const approve = () => l.settle(held.entry.id, 'approve', { state: 'credited' }, { now: T0 + 1, audit: { actor: 'ann', action: 'approve' }, limits });
      const [a, b] = await Promise.all([approve(), approve()]);
      expect([a, b].filter(Boolean)).toHaveLength(1);
      expect((a ?? b)!.entry).toMatchObject({ state: 'credited', kind: 'credit' });
      expect((a ?? b)!.entry).not.toHaveProperty('phase');
      expect((a ?? b)!.event?.data).toEqual(toRewardRecord((a ?? b)!.entry));
      expect(await l.budgetUsed('2026-11-22')).toBe(30);
      expect((await l.balance!(USER, T0)).creditedSats).toBe(30);
      expect((await l.audits(held.entry.id)).map((x) => [x.fromState, x.toState])).toEqual([['held', 'credited']]);
      expect((await events.since(USER, 0)).map((e) => (e.data as RewardRecord).status)).toEqual(['held', 'credited']);
    });

    it('debits the balance with a withdrawal (sending, claimed, its payment next), and with no sats asked, all that is withdrawable', async () => {
      const l = await ledger();
      await l.claim(credit({ sats: 100 }), NO_LIMITS, T0);
      const w = withdrawal({ sats: 40, gamertag: 'ada' });
      const r = await l.withdraw!(w, OPEN, T0 + 1);
      expect(r).toMatchObject({
        kind: 'created',
        entry: { id: w.id, kind: 'withdrawal', state: 'sending', phase: 'claimed', sats: 40, achievementId: '', gamertag: 'ada', day: '2026-11-22' },
      });
      expect(r).not.toHaveProperty('event');
      expect(await l.find(USER, w.idempotencyKey)).toMatchObject({ id: w.id, kind: 'withdrawal', state: 'sending' });
      expect(await l.balance!(USER, T0 + 1)).toEqual(facts({ creditedSats: 100, withdrawnSats: 40, withdrawnTodaySats: 40 }));
      // The next day it is still withdrawn, no longer today's.
      expect(await l.balance!(USER, T0 + DAY)).toEqual(facts({ creditedSats: 100, withdrawnSats: 40 }));
      expect((await l.withdraw!(withdrawal(), OPEN, T0 + 2)).entry.sats).toBe(60);
      expect((await l.balance!(USER, T0 + 2)).withdrawnSats).toBe(100);
      // Paid: told, as a withdrawal, in the record the client reads.
      await l.markSent(w.id);
      const paid = await l.settle(w.id, 'settle', { state: 'paid', paymentId: 'tx-w' }, { now: T0 + 3 });
      expect(paid?.event?.data).toMatchObject({ status: 'paid', kind: 'withdrawal', sats: 40 });
      expect(paid?.event?.data).toEqual(toRewardRecord(paid!.entry));
      expect((await l.balance!(USER, T0 + 3)).withdrawnSats).toBe(100);
    });

    it('refuses a withdrawal below the minimum, above the balance or past the limits (daily, allowance), and writes nothing', async () => {
      const l = await ledger();
      await l.claim(credit({ sats: 100 }), NO_LIMITS, T0);
      await refused(l, withdrawal({ sats: 9 }), OPEN, 'below_minimum');
      await refused(l, withdrawal({ sats: 101 }), OPEN, 'insufficient_balance');
      const daily = { ...OPEN, dailyLimitSats: 50 };
      expect((await l.withdraw!(withdrawal({ sats: 30 }), daily, T0)).entry.state).toBe('sending');
      await refused(l, withdrawal({ sats: 21 }), daily, 'over_limit');
      expect((await l.withdraw!(withdrawal(), daily, T0)).entry.sats).toBe(20);
      await refused(l, withdrawal(), daily, 'over_limit');
      // The next UTC day, the limit starts again.
      expect((await l.withdraw!(withdrawal({ sats: 50 }), daily, T0 + DAY)).entry.state).toBe('sending');
      expect(await l.balance!(USER, T0 + DAY)).toEqual(facts({ creditedSats: 100, withdrawnSats: 100, withdrawnTodaySats: 50 }));
    });

    it('lets a player withdraw what their witnessed play and the game server allow: beats at most the gap apart count, a raise counts once', async () => {
      const l = await ledger();
      const allowance = { ...OPEN, allowancePerPlayMinuteSats: 10, allowanceStartSats: 5 };
      await l.claim(credit({ sats: 100 }), NO_LIMITS, T0);
      await refused(l, withdrawal({ sats: 10 }), allowance, 'over_limit');
      // Three beats 30 s apart: a minute of play; then one after a long pause counts nothing, and one back in time neither.
      expect(await l.beat!(USER, T0, 60_000)).toBe(0);
      expect(await l.beat!(USER, T0 + 30_000, 60_000)).toBe(30_000);
      expect(await l.beat!(USER, T0 + 60_000, 60_000)).toBe(60_000);
      expect(await l.beat!(USER, T0 + 600_000, 60_000)).toBe(60_000);
      expect(await l.beat!(USER, T0 + 500_000, 60_000)).toBe(60_000);
      expect(await l.beat!('user-2', T0, 60_000)).toBe(0);
      expect((await l.balance!(USER, T0)).playMs).toBe(60_000);
      await refused(l, withdrawal({ sats: 16 }), allowance, 'over_limit');
      expect((await l.withdraw!(withdrawal({ sats: 15 }), allowance, T0)).entry.state).toBe('sending');
      await refused(l, withdrawal({ sats: 10 }), allowance, 'over_limit');
      // The game's server raises it, once per key.
      const raise = { userId: USER, idempotencyKey: 'level-5', sats: 20, reason: 'level 5' };
      expect(await l.raiseAllowance!(raise, T0)).toEqual({ created: true, sats: 20, reason: 'level 5' });
      expect(await l.raiseAllowance!(raise, T0 + 1)).toEqual({ created: false, sats: 20, reason: 'level 5' });
      // Its key again with another raise: nothing recorded, the first raise said.
      expect(await l.raiseAllowance!({ ...raise, sats: 900, reason: 'level 6' }, T0 + 2)).toEqual({ created: false, sats: 20, reason: 'level 5' });
      expect(await l.balance!(USER, T0)).toEqual(facts({ creditedSats: 100, withdrawnSats: 15, withdrawnTodaySats: 15, playMs: 60_000, raisedSats: 20 }));
      await refused(l, withdrawal({ sats: 21 }), allowance, 'over_limit');
      expect((await l.withdraw!(withdrawal(), allowance, T0)).entry.sats).toBe(20);
    });

    it('lets exactly one of 20 racing withdrawals of the whole balance through, under different keys; under one key, one entry', async () => {
      const l = await ledger();
      await l.claim(credit({ sats: 100 }), NO_LIMITS, T0);
      const racing = await Promise.allSettled(Array.from({ length: 20 }, () => l.withdraw!(withdrawal({ sats: 100 }), OPEN, T0)));
      expect(racing.filter((r) => r.status === 'fulfilled' && r.value.kind === 'created')).toHaveLength(1);
      const reasons = racing.flatMap((r) => (r.status === 'rejected' ? [(r.reason as { reason: string }).reason] : []));
      expect(reasons).toEqual(Array(19).fill('insufficient_balance'));
      expect((await l.balance!(USER, T0)).withdrawnSats).toBe(100);

      await l.claim(credit({ sats: 50 }), NO_LIMITS, T0);
      const w = withdrawal({ sats: 50 });
      const sameKey = await Promise.all(Array.from({ length: 10 }, () => l.withdraw!({ ...w, id: randomUUID() }, OPEN, T0)));
      expect(sameKey.filter((r) => r.kind === 'created')).toHaveLength(1);
      const ids = new Set(sameKey.map((r) => r.entry.id));
      expect(ids.size).toBe(1);
      // Known: its entry is the answer, whatever is asked now.
      expect(await l.withdraw!({ ...w, id: randomUUID(), sats: 10, requestHash: 'other' }, OPEN, T0 + 1)).toMatchObject({ kind: 'existing', entry: { id: [...ids][0], sats: 50 } });
      expect((await l.history(USER, 100)).filter((e) => e.kind === 'withdrawal')).toHaveLength(2);
    });

    it('gives the balance back when a withdrawal fails, or is released unsent (deferred): the same key withdraws again', async () => {
      const l = await ledger();
      await l.claim(credit({ sats: 100 }), NO_LIMITS, T0);
      const failed = await l.withdraw!(withdrawal({ sats: 60 }), OPEN, T0);
      await l.markSent(failed.entry.id);
      await l.settle(failed.entry.id, 'settle', { state: 'failed', reason: 'payment_refused' }, { now: T0 + 1 });
      expect((await l.balance!(USER, T0)).withdrawnSats).toBe(0);

      const w = withdrawal({ sats: 70 });
      const first = await l.withdraw!(w, OPEN, T0 + 2);
      const released = await l.settle(first.entry.id, 'release', { state: 'deferred', reason: 'unreachable' }, { now: T0 + 3 });
      expect(released?.entry).toMatchObject({ state: 'deferred', kind: 'withdrawal' });
      expect(released).not.toHaveProperty('event');
      expect(await l.balance!(USER, T0 + 3)).toEqual(facts({ creditedSats: 100 }));
      // Asked again under its key: decided whole on what the balance is now.
      await refused(l, withdrawal({ sats: 40 }), { ...OPEN, minWithdrawalSats: 50 }, 'below_minimum');
      expect(await l.withdraw!({ ...w, id: randomUUID() }, OPEN, T0 + DAY)).toMatchObject({
        kind: 'created',
        entry: { id: w.id, state: 'sending', phase: 'claimed', kind: 'withdrawal', sats: 70, day: '2026-11-23' },
      });
      expect(await l.balance!(USER, T0 + DAY)).toEqual(facts({ creditedSats: 100, withdrawnSats: 70, withdrawnTodaySats: 70 }));
      expect((await l.history(USER, 100)).filter((e) => e.kind === 'withdrawal')).toHaveLength(2);
    });

    it("never counts a withdrawal on the player's or address's cap, the budget or a repeat rule: claims after it are decided as before", async () => {
      const l = await ledger();
      const limits: ClaimLimits = { userDailyCapSats: 30, dailyBudgetSats: 40, addressDailyCapSats: 30 };
      const address = '203.0.113.7';
      expect((await l.claim(credit({ sats: 20, address, achievementId: 'once', repeat: { kind: 'once' } }), limits, T0)).entry.state).toBe('credited');
      const w = await l.withdraw!(withdrawal({ sats: 20, address }), OPEN, T0 + 1);
      expect(w.entry).toMatchObject({ state: 'sending', address });
      expect(await l.budgetUsed('2026-11-22')).toBe(20);
      expect((await l.claim(credit({ sats: 10, address, achievementId: 'daily', repeat: { kind: 'daily' } }), limits, T0 + 2)).entry.state).toBe('credited');
      expect((await l.claim(credit({ sats: 1, userId: 'user-2', address }), limits, T0 + 2)).entry.reason).toBe('address_daily_cap');
      expect((await l.claim(credit({ sats: 10, achievementId: 'once', repeat: { kind: 'once' } }), limits, T0 + 3)).entry.reason).toBe('already_claimed');
      // Settled, or failed, it moves no budget.
      await l.settle(w.entry.id, 'settle', { state: 'failed', reason: 'payment_refused' }, { now: T0 + 4 });
      expect(await l.budgetUsed('2026-11-22')).toBe(30);
      expect((await l.claim(credit({ sats: 11, userId: 'user-3' }), limits, T0 + 5)).entry.reason).toBe('daily_budget');
      expect((await l.claim(credit({ sats: 10, userId: 'user-3' }), limits, T0 + 5)).entry.state).toBe('credited');
    });

    it('decides a deferred claim again whole, as credited or paid as it is asked now; a key of the other sort (claim, withdrawal) is that entry', async () => {
      const l = await ledger();
      const early = { playStartedAt: T0, minPlayMs: 10_000 };
      const c = credit({ sats: 30, ...early });
      expect((await l.claim(c, NO_LIMITS, T0)).entry).toMatchObject({ state: 'deferred', kind: 'credit' });
      // Paid at once now (the relay's payout mode changed meanwhile): a payout.
      const paid = await l.claim({ ...c, id: randomUUID(), credit: false }, NO_LIMITS, T0 + 10_000);
      expect(paid).toMatchObject({ kind: 'created', entry: { id: c.id, state: 'sending' } });
      expect(paid.entry).not.toHaveProperty('kind');
      const p = credit({ sats: 40, achievementId: 'b', credit: false, ...early });
      await l.claim(p, NO_LIMITS, T0);
      expect((await l.claim({ ...p, id: randomUUID(), credit: true }, NO_LIMITS, T0 + 10_000)).entry).toMatchObject({ id: p.id, state: 'credited', kind: 'credit' });
      expect((await l.balance!(USER, T0)).creditedSats).toBe(40);

      // A withdrawal under a claim's key, and a claim under a withdrawal's: the entry the key has, nothing written.
      const deferredClaim = credit({ achievementId: 'c', requestHash: 'w-hash', ...early });
      await l.claim(deferredClaim, NO_LIMITS, T0);
      expect(await l.withdraw!(withdrawal({ idempotencyKey: deferredClaim.idempotencyKey, sats: 10 }), OPEN, T0 + 10_000)).toMatchObject({
        kind: 'existing',
        entry: { id: deferredClaim.id, state: 'deferred', kind: 'credit' },
      });
      const w = await l.withdraw!(withdrawal({ sats: 10, requestHash: 'hash-a' }), OPEN, T0);
      await l.settle(w.entry.id, 'release', { state: 'deferred', reason: 'unreachable' }, { now: T0 + 1 });
      expect(await l.claim(credit({ idempotencyKey: w.entry.idempotencyKey, achievementId: 'd' }), NO_LIMITS, T0 + 2)).toMatchObject({
        kind: 'existing',
        entry: { id: w.entry.id, state: 'deferred', kind: 'withdrawal' },
      });
      expect(await l.balance!(USER, T0)).toEqual(facts({ creditedSats: 40 }));
    });

    it("merges a guest's credits into the player, each told; a credit under a key the player already used stays the guest's, rejected; once only", async () => {
      const l = await ledger();
      if (!l.mergeGuest) return;
      const guest = 'guest_1';
      const shared = randomUUID();
      const credits = [];
      for (let i = 0; i < 5; i++) credits.push(await l.claim(credit({ userId: guest, sats: 10 + i, idempotencyKey: i === 2 ? shared : randomUUID() }), NO_LIMITS, T0 + i));
      const mine = await l.claim(credit({ sats: 7, idempotencyKey: shared }), NO_LIMITS, T0 + 10);
      const rules = { repeats: new Map([['coin', { kind: 'cooldown', seconds: 0 } as const]]), limits: NO_LIMITS };
      const merged = await l.mergeGuest(guest, USER, rules, { actor: 'player:ada', action: `merge ${guest}` }, T0 + 20);
      expect(merged.moved.map((s) => s.entry.id)).toEqual(credits.filter((_, i) => i !== 2).map((c) => c.entry.id));
      expect(merged.moved.every((s) => s.entry.userId === USER && s.entry.state === 'credited' && (s.event?.data as { userId?: string } | undefined)?.userId === USER)).toBe(true);
      expect(merged.dropped).toHaveLength(1);
      expect(merged.dropped[0]!.entry).toMatchObject({ id: credits[2]!.entry.id, userId: guest, state: 'rejected', reason: 'already_claimed' });
      expect((await l.balance!(USER, T0 + 20)).creditedSats).toBe(7 + 10 + 11 + 13 + 14);
      expect(await l.find(USER, shared)).toMatchObject({ id: mine.entry.id, sats: 7 });
      expect(await l.mergeGuest(guest, USER, rules, { actor: 'player:ada', action: `merge ${guest}` }, T0 + 30)).toMatchObject({ merged: false, moved: [], dropped: [] });
      // A claim of the guest's committed after the merge (it was on its way when the guest linked):
      // merged again into the same player, it moves; into another player, nothing does.
      const late = await l.claim(credit({ userId: guest, sats: 20 }), NO_LIMITS, T0 + 40);
      expect(await l.mergeGuest(guest, 'someone-else', rules, { actor: 'relay', action: `merge ${guest}` }, T0 + 41)).toMatchObject({ merged: false, moved: [], dropped: [] });
      const again = await l.mergeGuest(guest, USER, rules, { actor: 'relay', action: `merge ${guest}` }, T0 + 42);
      expect(again).toMatchObject({ merged: false, dropped: [] });
      expect(again.moved.map((s) => [s.entry.id, s.entry.userId, s.entry.state])).toEqual([[late.entry.id, USER, 'credited']]);
      expect((await l.balance!(USER, T0 + 42)).creditedSats).toBe(7 + 10 + 11 + 13 + 14 + 20);
      expect(await l.mergedInto!(guest)).toBe(USER);
    });

    it("moves a guest's credit held for an operator to the player, still held: approved later, it is the player's", async () => {
      const l = await ledger();
      if (!l.mergeGuest) return;
      const earned = await l.claim(credit({ userId: 'guest_h', sats: 10 }), NO_LIMITS, T0);
      const held = await l.claim(credit({ userId: 'guest_h', sats: 500, hold: true }), NO_LIMITS, T0 + 1);
      expect(held.entry.state).toBe('held');
      const rules = { repeats: new Map([['coin', { kind: 'cooldown', seconds: 0 } as const]]), limits: NO_LIMITS };
      const merged = await l.mergeGuest('guest_h', USER, rules, { actor: 'player:ada', action: 'merge guest_h' }, T0 + 10);
      expect(merged.moved.map((s) => [s.entry.id, s.entry.userId, s.entry.state, s.from])).toEqual([
        [earned.entry.id, USER, 'credited', 'credited'],
        [held.entry.id, USER, 'held', 'held'],
      ]);
      expect((await l.balance!(USER, T0 + 10)).creditedSats).toBe(10);
      const approved = await l.settle(held.entry.id, 'approve', { state: 'credited' }, { now: T0 + 20, audit: { actor: 'ann', action: 'approve' }, limits: NO_LIMITS });
      expect(approved).toMatchObject({ entry: { userId: USER, state: 'credited', sats: 500 } });
      expect((await l.balance!(USER, T0 + 20)).creditedSats).toBe(510);
    });

    it("moves a guest's tournament prize past the player's cap (counted on its day), and then names the merged guest's id as its player", async () => {
      const s = await store();
      const l = s.ledger;
      if (!l.mergeGuest || !l.knownPlayers || !l.rememberPlayer) return;
      const limits = { userDailyCapSats: 100, dailyBudgetSats: 0 };
      const guest = 'guest_0193f1a2-7b4c-7d5e-8f60-123456789abc';
      const prize = await l.claim(credit({ userId: guest, achievementId: 'cup', sats: 5_000, repeat: { kind: 'once' } }), NO_LIMITS, T0);
      const coin = await l.claim(credit({ userId: guest, sats: 50 }), NO_LIMITS, T0 + 1);
      await l.rememberPlayer(USER, 'ada', T0 + 2);
      expect(await l.knownPlayers([guest, 'ada'])).toEqual([['ada', USER]]);
      const rules = { repeats: new Map([['coin', { kind: 'cooldown', seconds: 0 } as const]]), limits, prizes: new Set(['cup']) };
      const merged = await l.mergeGuest(guest, USER, rules, { actor: 'player:ada', action: `merge ${guest}` }, T0 + 10);
      expect([merged.moved.map((m) => m.entry.id), merged.dropped.map((m) => [m.entry.id, m.entry.reason])]).toEqual([[prize.entry.id], [[coin.entry.id, 'user_daily_cap']]]);
      expect((await l.balance!(USER, T0 + 10)).creditedSats).toBe(5_000);
      expect(await l.knownPlayers([guest, 'ada', 'guest_0193f1a2-7b4c-7d5e-8f60-000000000000'])).toEqual([
        [guest, USER],
        ['ada', USER],
      ]);
    });

    it("holds the player to its cap on each credit's day across guests merged into it: what does not fit stays the guest's, rejected", async () => {
      const l = await ledger();
      if (!l.mergeGuest) return;
      const limits = { userDailyCapSats: 100, dailyBudgetSats: 0 };
      const rules = { repeats: new Map([['coin', { kind: 'cooldown', seconds: 0 } as const]]), limits };
      // Two guests, each at the cap today; one of them also earned yesterday. The player holds 30 today.
      for (const g of ['guest_a', 'guest_b']) for (let i = 0; i < 2; i++) await l.claim(credit({ userId: g, sats: 50 }), limits, T0 + i);
      const yesterday = await l.claim(credit({ userId: 'guest_b', sats: 100 }), limits, T0 - DAY);
      await l.claim(credit({ sats: 30 }), limits, T0 + 5);
      const audit = { actor: 'player:ada', action: 'merge' };
      const a = await l.mergeGuest('guest_a', USER, rules, audit, T0 + 10);
      expect([a.moved.map((s) => s.entry.sats), a.dropped.map((s) => [s.entry.userId, s.entry.state, s.entry.reason])]).toEqual([
        [50],
        [['guest_a', 'rejected', 'user_daily_cap']],
      ]);
      const b = await l.mergeGuest('guest_b', USER, rules, audit, T0 + 20);
      expect(b.moved.map((s) => s.entry.id)).toEqual([yesterday.entry.id]);
      expect(b.dropped.map((s) => s.entry.reason)).toEqual(['user_daily_cap', 'user_daily_cap']);
      expect((await l.balance!(USER, T0 + 20)).creditedSats).toBe(30 + 50 + 100);
      // The day's cap counts what moved: the player's next claim today is refused, tomorrow's is not.
      expect((await l.claim(credit({ sats: 21 }), limits, T0 + 30)).entry).toMatchObject({ state: 'rejected', reason: 'user_daily_cap' });
      expect((await l.claim(credit({ sats: 100 }), limits, T0 + DAY)).entry.state).toBe('credited');
    });

    it('decides credits earned in the same millisecond in the order the guest earned them, whatever their ids', async () => {
      const l = await ledger();
      if (!l.mergeGuest) return;
      const limits = { userDailyCapSats: 100, dailyBudgetSats: 0 };
      const rules = { repeats: new Map([['coin', { kind: 'cooldown', seconds: 0 } as const]]), limits };
      // Earned first, with the larger id: it fits the cap and the second does not (the guest earned both under no cap).
      const first = await l.claim(credit({ id: 'ffffffff-0000-7000-8000-000000000000', userId: 'guest_t', sats: 80 }), NO_LIMITS, T0);
      const second = await l.claim(credit({ id: '00000000-0000-7000-8000-000000000000', userId: 'guest_t', sats: 30 }), NO_LIMITS, T0);
      const m = await l.mergeGuest('guest_t', USER, rules, { actor: 'player:ada', action: 'merge guest_t' }, T0 + 10);
      expect([m.moved.map((s) => s.entry.id), m.dropped.map((s) => s.entry.id)]).toEqual([[first.entry.id], [second.entry.id]]);
    });

    it("holds the player to its cap on a credit's day after the relay pruned that day's limits (a guest links days after it earned)", async () => {
      const l = await ledger();
      if (!l.mergeGuest || !l.prune) return;
      const limits = { userDailyCapSats: 100, dailyBudgetSats: 0 };
      const rules = { repeats: new Map([['coin', { kind: 'cooldown', seconds: 0 } as const]]), limits };
      // Three days ago the player earned 80 and the guest 50; the relay then forgot past days' limits (as it does each hour).
      await l.claim(credit({ sats: 80 }), limits, T0 - 3 * DAY);
      const earned = await l.claim(credit({ userId: 'guest_p', sats: 50 }), limits, T0 - 3 * DAY + 1);
      await l.prune(new Date(T0 - DAY).toISOString().slice(0, 10), 0, 0);
      const m = await l.mergeGuest('guest_p', USER, rules, { actor: 'player:ada', action: 'merge guest_p' }, T0);
      expect([m.moved.length, m.dropped.map((s) => [s.entry.id, s.entry.reason])]).toEqual([0, [[earned.entry.id, 'user_daily_cap']]]);
      expect((await l.balance!(USER, T0)).creditedSats).toBe(80);
    });

    it('tells each state of a withdrawal and of a credit in exactly the record a client reads (toRewardRecord of the entry)', async () => {
      const { ledger: l, events } = await store();
      await l.claim(credit({ sats: 100 }), NO_LIMITS, T0 + 7);
      const held = await l.claim(credit({ sats: 5, hold: true }), NO_LIMITS, T0 + 8);
      await l.settle(held.entry.id, 'deny', { state: 'rejected', reason: 'denied_by_operator' }, { now: T0 + 9, audit: { actor: 'ann', action: 'deny' } });
      const w = await l.withdraw!(withdrawal({ sats: 60 }), { ...OPEN, holdAboveSats: 50 }, T0 + 10);
      await l.settle(w.entry.id, 'deny', { state: 'rejected', reason: 'denied_by_operator' }, { now: T0 + 11, audit: { actor: 'ann', action: 'deny' } });
      const sent = await l.withdraw!(withdrawal({ sats: 20 }), OPEN, T0 + 12);
      await l.markSent(sent.entry.id);
      await l.settle(sent.entry.id, 'settle', { state: 'needs_review', reason: 'timeout', paymentId: 'tx-w' }, { now: T0 + 13 });
      await l.settle(sent.entry.id, 'mark_failed', { state: 'failed', reason: 'operator_marked_failed' }, { now: T0 + 14, audit: { actor: 'ann', action: 'mark-failed' } });
      const paid = await l.withdraw!(withdrawal({ sats: 30 }), OPEN, T0 + 15);
      await l.settle(paid.entry.id, 'settle', { state: 'paid', paymentId: 'tx-p' }, { now: T0 + 16 });
      const told = await events.since(USER, 0, 100);
      const records = told.map((e) => e.data as RewardRecord);
      expect(records.map((r) => `${r.status}${r.kind ? `:${r.kind}` : ''}`)).toEqual([
        'credited',
        'held',
        'rejected',
        'held:withdrawal',
        'rejected:withdrawal',
        'needs_review:withdrawal',
        'failed:withdrawal',
        'paid:withdrawal',
      ]);
      // Each as the entry was when it was told: the last one of each entry is the entry now.
      for (const id of [held.entry.id, w.entry.id, sent.entry.id, paid.entry.id]) {
        const last = records.filter((r) => r.id === id).at(-1);
        expect(last).toEqual(toRewardRecord((await l.get(id))!));
      }
    });

    it('holds a withdrawal above the threshold for an operator (debited, told as a withdrawal); approved on a later day, it goes on as sending on its own day', async () => {
      const { ledger: l, events } = await store();
      await l.claim(credit({ sats: 100 }), NO_LIMITS, T0);
      const held = await l.withdraw!(withdrawal({ sats: 60 }), { ...OPEN, holdAboveSats: 50 }, T0);
      expect(held).toMatchObject({ kind: 'created', entry: { state: 'held', kind: 'withdrawal' }, event: { type: 'reward', data: { status: 'held', kind: 'withdrawal' } } });
      expect(held.kind === 'created' && held.event?.data).toEqual(toRewardRecord(held.entry));
      expect(await l.balance!(USER, T0)).toEqual(facts({ creditedSats: 100, withdrawnSats: 60, withdrawnTodaySats: 60 }));
      // No cap or budget is decided again for it: a day with no room for a claim is no matter.
      const full: ClaimLimits = { userDailyCapSats: 1, dailyBudgetSats: 1 };
      const approved = await l.settle(held.entry.id, 'approve', { state: 'sending' }, { now: T0 + DAY, audit: { actor: 'ann', action: 'approve' }, limits: full });
      expect(approved?.entry).toMatchObject({ state: 'sending', phase: 'claimed', kind: 'withdrawal', day: '2026-11-22' });
      expect(await l.markSent(held.entry.id)).toBe(true);
      expect(await l.budgetUsed('2026-11-23')).toBe(0);
      expect((await l.audits(held.entry.id)).map((x) => [x.actor, x.fromState, x.toState])).toEqual([['ann', 'held', 'sending']]);
      expect((await events.since(USER, 0)).map((e) => [(e.data as RewardRecord).status, (e.data as RewardRecord).kind])).toEqual([
        ['credited', undefined],
        ['held', 'withdrawal'],
      ]);
    });
  });
}
