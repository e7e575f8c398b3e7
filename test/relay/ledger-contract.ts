// What every ledger backend must do, as one suite: run it with a factory for each backend.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { toRewardRecord } from '../../src/relay/core/reward-record.js';
import type { ClaimLimits, NewClaim, RelayStore, RewardRecord } from '../../src/relay/index.js';

const NO_LIMITS: ClaimLimits = { userDailyCapSats: 0, dailyBudgetSats: 0 };
const T0 = Date.parse('2026-11-22T10:00:00Z');

function claim(over: Partial<NewClaim> = {}): NewClaim {
  return {
    id: randomUUID(),
    userId: 'user-1',
    idempotencyKey: randomUUID(),
    requestHash: 'hash-a',
    achievementId: 'first-coin',
    sats: 21,
    repeat: { kind: 'once' },
    ...over,
  };
}

export function ledgerContract(name: string, open: () => Promise<RelayStore>) {
  describe(`the ${name} ledger keeps the ledger contract`, () => {
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

    it('records a claim as sending (claimed, not yet sent) and finds it by key and id', async () => {
      const l = await ledger();
      const c = claim();
      const r = await l.claim(c, NO_LIMITS, T0);
      expect(r).toMatchObject({ kind: 'created', entry: { id: c.id, state: 'sending', phase: 'claimed', sats: 21 } });
      expect(await l.find(c.userId, c.idempotencyKey)).toMatchObject({ id: c.id, state: 'sending', phase: 'claimed' });
      expect((await l.get(c.id))?.idempotencyKey).toBe(c.idempotencyKey);
    });

    it("records the terms a claim was decided by, and carries them on the player's records until it is paid", async () => {
      const l = await ledger();
      const terms = { usd: 0.05, btcUsd: 65_000, streakDay: 3 };
      const held = await l.claim(claim({ terms, hold: true }), NO_LIMITS, T0);
      expect(held).toMatchObject({ kind: 'created', entry: { state: 'held', terms } });
      expect(held.kind === 'created' && held.event?.data).toMatchObject({ status: 'held', ...terms });
      await l.settle(held.entry.id, 'approve', { state: 'sending' }, { audit: { actor: 'ops', action: 'approve' } });
      const paid = await l.settle(held.entry.id, 'settle', { state: 'paid', paymentId: 'tx-1' });
      expect(paid?.event?.data).toMatchObject({ status: 'paid', paymentId: 'tx-1', ...terms });
      expect(toRewardRecord((await l.get(held.entry.id))!)).toMatchObject({ status: 'paid', ...terms });
      // An entry decided without terms has none on its record.
      const plain = await l.claim(claim({ achievementId: 'plain' }), NO_LIMITS, T0);
      expect(Object.keys(toRewardRecord(plain.entry))).not.toContain('usd');
      expect((await l.get(plain.entry.id))?.terms).toBeUndefined();
    });

    it('answers a replayed key with the entry it has, whatever the body, and changes nothing', async () => {
      const l = await ledger();
      const c = claim();
      await l.claim(c, NO_LIMITS, T0);
      expect(await l.claim({ ...c, id: randomUUID() }, NO_LIMITS, T0 + 1)).toMatchObject({ kind: 'existing', entry: { id: c.id, requestHash: 'hash-a' } });
      expect(await l.claim({ ...c, id: randomUUID(), requestHash: 'hash-b' }, NO_LIMITS, T0 + 2)).toMatchObject({ kind: 'existing', entry: { id: c.id, requestHash: 'hash-a' } });
      expect(await l.history(c.userId, 10)).toHaveLength(1);
    });

    it('decides a claim timed before the last one of its achievement (a clock stepped back) as no earlier than that one', async () => {
      const l = await ledger();
      const midnight = Date.parse('2026-11-23T00:00:00Z');
      // A daily reward on the 22nd, then on the 23rd just past midnight; the next claim's clock says the 22nd again.
      const daily = { achievementId: 'daily', repeat: { kind: 'daily' } as const };
      expect((await l.claim(claim(daily), NO_LIMITS, T0)).entry.state).toBe('sending');
      expect((await l.claim(claim(daily), NO_LIMITS, midnight + 1000)).entry.state).toBe('sending');
      expect((await l.claim(claim(daily), NO_LIMITS, midnight - 1000)).entry).toMatchObject({ state: 'rejected', reason: 'already_claimed_today' });
      // Earned any number of times: never refused for it, nor for a cooldown not yet over.
      const any = { achievementId: 'any', repeat: { kind: 'cooldown', seconds: 0 } as const };
      expect((await l.claim(claim(any), NO_LIMITS, T0 + 5000)).entry.state).toBe('sending');
      // Nor dated at the last one's time: no rule reads it (both ledgers keep the claim's own).
      expect((await l.claim(claim(any), NO_LIMITS, T0)).entry).toMatchObject({ state: 'sending', createdAt: T0 });
      const cool = { achievementId: 'cool', repeat: { kind: 'cooldown', seconds: 30 } as const };
      expect((await l.claim(claim(cool), NO_LIMITS, T0 + 5000)).entry.state).toBe('sending');
      expect((await l.claim(claim(cool), NO_LIMITS, T0 + 40_000)).entry.state).toBe('sending');
      expect((await l.claim(claim(cool), NO_LIMITS, T0 + 20_000)).entry).toMatchObject({ state: 'rejected', reason: 'cooldown', createdAt: T0 + 40_000 });
    });

    it('applies the repeat policies by userId', async () => {
      const l = await ledger();
      const once = { achievementId: 'once', repeat: { kind: 'once' } as const };
      expect((await l.claim(claim(once), NO_LIMITS, T0)).entry.state).toBe('sending');
      expect((await l.claim(claim(once), NO_LIMITS, T0 + 86_400_000 * 30)).entry).toMatchObject({ state: 'rejected', reason: 'already_claimed' });
      expect((await l.claim(claim({ ...once, userId: 'user-2' }), NO_LIMITS, T0)).entry.state).toBe('sending');
      const daily = { achievementId: 'daily', repeat: { kind: 'daily' } as const };
      expect((await l.claim(claim(daily), NO_LIMITS, T0)).entry.state).toBe('sending');
      expect((await l.claim(claim(daily), NO_LIMITS, T0 + 3_600_000)).entry.reason).toBe('already_claimed_today');
      expect((await l.claim(claim(daily), NO_LIMITS, Date.parse('2026-11-23T00:00:00Z'))).entry.state).toBe('sending');
      const cool = { achievementId: 'cool', repeat: { kind: 'cooldown', seconds: 30 } as const };
      expect((await l.claim(claim(cool), NO_LIMITS, T0)).entry.state).toBe('sending');
      expect((await l.claim(claim(cool), NO_LIMITS, T0 + 29_999)).entry.reason).toBe('cooldown');
      expect((await l.claim(claim(cool), NO_LIMITS, T0 + 30_000)).entry.state).toBe('sending');
    });

    it("holds the player's daily cap and the project's budget exactly, and frees what failed", async () => {
      const l = await ledger();
      const limits = { userDailyCapSats: 50, dailyBudgetSats: 60 };
      const c = (userId: string) => claim({ userId, repeat: { kind: 'cooldown', seconds: 0 }, sats: 25 });
      expect((await l.claim(c('a'), limits, T0)).entry.state).toBe('sending');
      const second = await l.claim(c('a'), limits, T0);
      expect(second.entry.state).toBe('sending');
      expect((await l.claim(c('a'), limits, T0)).entry.reason).toBe('user_daily_cap');
      expect((await l.claim(c('b'), limits, T0)).entry.reason).toBe('daily_budget');
      await l.settle(second.entry.id, 'settle', { state: 'failed', reason: 'payment_refused' });
      expect((await l.claim(c('b'), limits, T0)).entry.state).toBe('sending');
      // A new UTC day starts afresh.
      expect((await l.claim(c('a'), limits, Date.parse('2026-11-23T00:00:01Z'))).entry.state).toBe('sending');
    });

    it('settles as a compare-and-set: from a state the entry is no longer in, nothing changes', async () => {
      const l = await ledger();
      const { entry } = await l.claim(claim(), NO_LIMITS, T0);
      expect(await l.settle(entry.id, 'settle', { state: 'paid', paymentId: 'tx-1' }, { now: T0 + 5 })).toMatchObject({
        from: 'sending',
        entry: { state: 'paid', paymentId: 'tx-1', settledAt: T0 + 5 },
      });
      expect(await l.settle(entry.id, 'settle', { state: 'failed', reason: 'x' })).toBeUndefined();
      expect(await l.settle(entry.id, 'late_answer', { state: 'failed', reason: 'x' })).toBeUndefined();
      expect(await l.get(entry.id)).toMatchObject({ state: 'paid', paymentId: 'tx-1' });
      expect(await l.settle('no-such-id', 'settle', { state: 'paid', paymentId: 'x' })).toBeUndefined();
    });

    it('marks a payment sent once, only while it is still claimed', async () => {
      const l = await ledger();
      const { entry } = await l.claim(claim(), NO_LIMITS, T0);
      expect(await l.markSent(entry.id)).toBe(true);
      expect(await l.markSent(entry.id)).toBe(false);
      expect((await l.get(entry.id))?.phase).toBe('sent');
      const other = (await l.claim(claim({ achievementId: 'b' }), NO_LIMITS, T0)).entry;
      await l.settle(other.id, 'settle', { state: 'deferred', reason: 'unreachable' });
      expect(await l.markSent(other.id)).toBe(false);
    });

    it('claims a deferred key afresh (nothing was paid), back in the claimed phase', async () => {
      const l = await ledger();
      const c = claim();
      const { entry } = await l.claim(c, NO_LIMITS, T0);
      await l.markSent(entry.id);
      await l.settle(entry.id, 'settle', { state: 'deferred', reason: 'unreachable' });
      expect(await l.claim({ ...c, id: randomUUID() }, NO_LIMITS, T0 + 1000)).toMatchObject({ kind: 'created', entry: { id: entry.id, state: 'sending', phase: 'claimed' } });
      expect(await l.inState('sending')).toHaveLength(1);
    });

    it('lets exactly the expected claims win when they race: one key, one player, one budget', async () => {
      const l = await ledger();
      const c = claim();
      const sameKey = await Promise.all(Array.from({ length: 50 }, () => l.claim({ ...c, id: randomUUID() }, NO_LIMITS, T0)));
      expect(sameKey.filter((r) => r.kind === 'created')).toHaveLength(1);
      expect(new Set(sameKey.map((r) => r.entry.id)).size).toBe(1);

      const samePlayer = await Promise.all(Array.from({ length: 50 }, () => l.claim(claim({ achievementId: 'level' }), NO_LIMITS, T0)));
      expect(samePlayer.filter((r) => r.entry.state === 'sending')).toHaveLength(1);
      expect(samePlayer.filter((r) => r.entry.reason === 'already_claimed')).toHaveLength(49);

      // The next day, a budget for 30 of 100 racing players.
      const budget = { userDailyCapSats: 0, dailyBudgetSats: 21 * 30 };
      const many = await Promise.all(
        Array.from({ length: 100 }, (_, i) => l.claim(claim({ userId: `p${i}`, achievementId: 'rush', repeat: { kind: 'cooldown', seconds: 0 } }), budget, T0 + 86_400_000)),
      );
      expect(many.filter((r) => r.entry.state === 'sending')).toHaveLength(30);
      expect(many.filter((r) => r.entry.reason === 'daily_budget')).toHaveLength(70);
    });

    it("lists a player's history newest first, and entries by state", async () => {
      const l = await ledger();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await l.claim(claim({ achievementId: `a${i}` }), NO_LIMITS, T0 + i)).entry.id);
      expect((await l.history('user-1', 2)).map((e) => e.id)).toEqual([ids[2], ids[1]]);
      await l.settle(ids[0]!, 'settle', { state: 'needs_review', reason: 'timeout' });
      expect((await l.inState('needs_review')).map((e) => e.id)).toEqual([ids[0]]);
    });

    it('reports per day and state, lists recent entries by player or achievement, and keeps an audit trail of decisions by hand', async () => {
      const l = await ledger();
      const a = (await l.claim(claim({ userId: 'ann', achievementId: 'x', repeat: { kind: 'cooldown', seconds: 0 } }), NO_LIMITS, T0)).entry;
      const b = (await l.claim(claim({ userId: 'bob', achievementId: 'y', repeat: { kind: 'cooldown', seconds: 0 } }), NO_LIMITS, T0)).entry;
      await l.settle(a.id, 'settle', { state: 'paid', paymentId: 'tx' }, { now: T0 + 1 });
      await l.settle(b.id, 'settle', { state: 'needs_review', reason: 'timeout' }, { now: T0 + 1 });
      expect(
        await l.settle(b.id, 'mark_failed', { state: 'failed', reason: 'operator_marked_failed' }, { now: T0 + 2, audit: { actor: 'ops@example.com', action: 'mark-failed' } }),
      ).toMatchObject({ entry: { state: 'failed' } });
      expect(await l.audits(b.id)).toEqual([{ rewardId: b.id, actor: 'ops@example.com', action: 'mark-failed', fromState: 'needs_review', toState: 'failed', at: T0 + 2 }]);
      expect(await l.audits(a.id)).toEqual([]);
      const report = await l.report('2026-11-22');
      expect(report.find((r) => r.state === 'paid')).toEqual({ day: '2026-11-22', state: 'paid', count: 1, sats: 21, players: 1 });
      expect(report.find((r) => r.state === 'failed')).toMatchObject({ count: 1, players: 1 });
      expect(await l.report('2026-11-23')).toEqual([]);
      expect((await l.recent({}, 10)).map((e) => e.id)).toEqual([b.id, a.id]);
      expect((await l.recent({ userId: 'ann' }, 10)).map((e) => e.id)).toEqual([a.id]);
      expect((await l.recent({ achievementId: 'y' }, 10)).map((e) => e.id)).toEqual([b.id]);
    });

    it("writes the player's reward event in the settlement's own transaction, for every state the player sees", async () => {
      const { ledger: l, events } = await store();
      const { entry } = await l.claim(claim(), NO_LIMITS, T0);
      const review = await l.settle(entry.id, 'settle', { state: 'needs_review', reason: 'timeout', paymentId: 'tx-9' });
      const paid = await l.settle(entry.id, 'reconcile', { state: 'paid', paymentId: 'tx-9' }, { audit: { actor: 'ann', action: 'reconcile' } });
      const told = await events.since('user-1', 0);
      expect(told.map((e) => [e.type, (e.data as RewardRecord).status])).toEqual([
        ['reward', 'needs_review'],
        ['reward', 'paid'],
      ]);
      // What the settlement returns is what was stored, id and all: the core publishes it as is.
      expect(told.map((e) => e.id)).toEqual([review?.event?.id, paid?.event?.id]);
      expect(told[1]!.data).toMatchObject({ id: entry.id, idempotencyKey: entry.idempotencyKey, status: 'paid', paymentId: 'tx-9', sats: 21 });
      expect(await l.audits(entry.id)).toMatchObject([{ actor: 'ann', fromState: 'needs_review', toState: 'paid' }]);
    });

    it('tells the player of a refusal with its reason, and of nothing the relay keeps to itself (sending, deferred)', async () => {
      const { ledger: l, events } = await store();
      const c = claim();
      const first = await l.claim(c, NO_LIMITS, T0);
      expect(first).not.toHaveProperty('event');
      const again = await l.claim(claim({ achievementId: c.achievementId }), NO_LIMITS, T0 + 1);
      expect(again).toMatchObject({ kind: 'created', entry: { state: 'rejected', reason: 'already_claimed' }, event: { type: 'reward' } });
      expect(await l.settle(first.entry.id, 'settle', { state: 'deferred', reason: 'unreachable' })).not.toHaveProperty('event');
      expect((await events.since('user-1', 0)).map((e) => (e.data as RewardRecord).status)).toEqual(['rejected']);
    });

    it('keeps the transaction id and gamertag it had when a later settlement does not name them', async () => {
      const l = await ledger();
      const { entry } = await l.claim(claim(), NO_LIMITS, T0);
      await l.settle(entry.id, 'settle', { state: 'needs_review', reason: 'timeout', paymentId: 'tx-7', gamertag: 'ann' });
      const s = await l.settle(entry.id, 'late_answer', { state: 'failed', reason: 'payment_failed' });
      expect(s?.entry).toMatchObject({ state: 'failed', paymentId: 'tx-7', gamertag: 'ann' });
      expect(await l.get(entry.id)).toMatchObject({ state: 'failed', paymentId: 'tx-7', gamertag: 'ann' });
    });

    it('holds a claim for an operator: reserved against caps and budget, told, left alone by recovery; approved once (held → sending), denied frees it', async () => {
      const { ledger: l, events } = await store();
      const limits = { userDailyCapSats: 0, dailyBudgetSats: 50 };
      const held = await l.claim(claim({ sats: 30, hold: true }), limits, T0);
      expect(held).toMatchObject({ kind: 'created', entry: { state: 'held' }, event: { type: 'reward' } });
      expect(held.entry).not.toHaveProperty('phase');
      expect((await l.claim(claim({ achievementId: 'b', sats: 30 }), limits, T0)).entry.reason).toBe('daily_budget');
      expect(await l.abandoned(T0 + 86_400_000 * 365, T0 + 86_400_000 * 365)).toEqual([]);
      expect((await l.inState('held')).map((e) => e.id)).toEqual([held.entry.id]);
      const approve = () => l.settle(held.entry.id, 'approve', { state: 'sending' }, { now: T0 + 1, audit: { actor: 'ann', action: 'approve' } });
      const [a, b] = await Promise.all([approve(), approve()]);
      expect([a, b].filter(Boolean)).toHaveLength(1);
      expect((a ?? b)!.entry).toMatchObject({ state: 'sending', phase: 'claimed' });
      expect(await l.markSent(held.entry.id)).toBe(true);
      expect((await l.audits(held.entry.id)).map((x) => [x.actor, x.fromState, x.toState])).toEqual([['ann', 'held', 'sending']]);

      const other = await l.claim(claim({ userId: 'user-2', achievementId: 'c', sats: 20, hold: true }), limits, T0);
      expect(other.entry.state).toBe('held');
      expect((await l.claim(claim({ userId: 'user-3', sats: 1 }), limits, T0)).entry.reason).toBe('daily_budget');
      const denied = await l.settle(other.entry.id, 'deny', { state: 'rejected', reason: 'denied_by_operator' }, { now: T0 + 2, audit: { actor: 'bob', action: 'deny' } });
      expect(denied?.entry).toMatchObject({ state: 'rejected', reason: 'denied_by_operator' });
      expect((await l.claim(claim({ userId: 'user-3', sats: 20 }), limits, T0)).entry.state).toBe('sending');
      expect((await events.since('user-2', 0)).map((e) => (e.data as RewardRecord).status)).toEqual(['held', 'rejected']);
    });

    it("a deferred claim re-sent after a price change is decided whole at the new price: caps, budget and hold at today's sats, and a release frees exactly that", async () => {
      const { ledger: l } = await store();
      const limits = { userDailyCapSats: 1000, dailyBudgetSats: 5000 };
      const early = (key: string, sats: number, hold = false) =>
        claim({ idempotencyKey: key, achievementId: 'bigcoin', sats, repeat: { kind: 'daily' }, playStartedAt: T0, minPlayMs: 3000, ...(hold ? { hold } : {}) });
      const keys = Array.from({ length: 5 }, () => randomUUID());
      // Banked before the play time at 1,000 sats (held above 500): deferred, nothing reserved.
      for (const k of keys) expect((await l.claim(early(k, 1000, true), limits, T0 + 1000)).entry).toMatchObject({ state: 'deferred', reason: 'too_early', sats: 1000 });
      expect(await l.budgetUsed('2026-11-22')).toBe(0);
      // The operator lowers the price to 10 (no longer held); the bot re-sends its keys when due.
      const again = [];
      for (const k of keys) again.push((await l.claim(early(k, 10), limits, T0 + 5000)).entry);
      expect(again.map((e) => [e.state, e.sats])).toEqual([
        ['sending', 10],
        ['rejected', 10],
        ['rejected', 10],
        ['rejected', 10],
        ['rejected', 10],
      ]);
      expect(new Set(again.slice(1).map((e) => e.reason))).toEqual(new Set(['already_claimed_today']));
      expect(await l.budgetUsed('2026-11-22')).toBe(10);
      // Its payment fails: exactly the 10 reserved is freed, never the 1,000 it was first priced at.
      await l.settle(again[0]!.id, 'settle', { state: 'failed', reason: 'payment_refused' }, { now: T0 + 6000 });
      expect(await l.budgetUsed('2026-11-22')).toBe(0);
    });

    it('a held claim approved on a later UTC day counts on that day, and with no room there stays held (daily_budget)', async () => {
      const { ledger: l } = await store();
      const DAY = 86_400_000;
      const limits = { userDailyCapSats: 0, dailyBudgetSats: 1000 };
      const held = await l.claim(claim({ sats: 600, hold: true }), limits, T0);
      expect(await l.budgetUsed('2026-11-22')).toBe(600);
      // Day 2: another player takes 500 of the day's 1,000.
      expect((await l.claim(claim({ userId: 'user-2', achievementId: 'x', sats: 500 }), limits, T0 + DAY)).entry.state).toBe('sending');
      const audit = { actor: 'ann', action: 'approve' };
      await expect(l.settle(held.entry.id, 'approve', { state: 'sending' }, { now: T0 + DAY + 1, audit, limits })).rejects.toMatchObject({
        name: 'DayLimitRefusal',
        reason: 'daily_budget',
      });
      expect(await l.get(held.entry.id)).toMatchObject({ state: 'held' });
      expect(await l.audits(held.entry.id)).toEqual([]);
      expect([await l.budgetUsed('2026-11-22'), await l.budgetUsed('2026-11-23')]).toEqual([600, 500]);
      // Day 3 has room: approved, it counts on day 3 and leaves day 1.
      const approved = await l.settle(held.entry.id, 'approve', { state: 'sending' }, { now: T0 + 2 * DAY, audit, limits });
      expect(approved?.entry).toMatchObject({ state: 'sending', phase: 'claimed' });
      expect([await l.budgetUsed('2026-11-22'), await l.budgetUsed('2026-11-24')]).toEqual([0, 600]);
      expect((await l.report('2026-11-24')).find((r) => r.state === 'sending')).toMatchObject({ day: '2026-11-24', sats: 600 });
    });

    it('caps the sats of one address per UTC day across players, exactly under a race, and frees what failed', async () => {
      const l = await ledger();
      const limits = { userDailyCapSats: 0, dailyBudgetSats: 0, addressDailyCapSats: 40 };
      const racing = await Promise.all(Array.from({ length: 20 }, (_, i) => l.claim(claim({ userId: `bot-${i}`, address: '203.0.113.7', sats: 10 }), limits, T0)));
      const won = racing.filter((r) => r.entry.state === 'sending');
      expect(won).toHaveLength(4);
      expect(racing.filter((r) => r.entry.reason === 'address_daily_cap')).toHaveLength(16);
      expect(won[0]!.entry.address).toBe('203.0.113.7');
      expect((await l.get(won[0]!.entry.id))?.address).toBe('203.0.113.7');
      // Another address is not touched; a failed payment gives its sats back.
      expect((await l.claim(claim({ userId: 'bot-x', address: '198.51.100.1', sats: 10 }), limits, T0)).entry.state).toBe('sending');
      await l.settle(won[0]!.entry.id, 'settle', { state: 'failed', reason: 'payment_refused' });
      expect((await l.claim(claim({ userId: 'bot-y', address: '203.0.113.7', sats: 10 }), limits, T0)).entry.state).toBe('sending');
      expect((await l.claim(claim({ userId: 'bot-z', address: '203.0.113.7', sats: 10 }), limits, T0)).entry.reason).toBe('address_daily_cap');
      expect((await l.claim(claim({ userId: 'bot-z', address: '203.0.113.7', sats: 10 }), limits, Date.parse('2026-11-23T00:00:01Z'))).entry.state).toBe('sending');
    });

    it('spends a proof nonce once, under any key and any player, even when claims race', async () => {
      const l = await ledger();
      const racing = await Promise.all(Array.from({ length: 10 }, (_, i) => l.claim(claim({ userId: `p${i}`, proofNonce: 'nonce-1' }), NO_LIMITS, T0)));
      expect(racing.filter((r) => r.entry.state === 'sending')).toHaveLength(1);
      expect(racing.filter((r) => r.entry.reason === 'proof_used')).toHaveLength(9);
      expect((await l.claim(claim({ userId: 'p0', achievementId: 'other', proofNonce: 'nonce-1' }), NO_LIMITS, T0 + 1)).entry.reason).toBe('proof_used');
      expect((await l.claim(claim({ userId: 'p0', achievementId: 'other', proofNonce: 'nonce-2' }), NO_LIMITS, T0 + 1)).entry.state).toBe('sending');
    });

    it('defers a claim made before its play time (too_early: nothing reserved, no proof spent, the key claims again when due)', async () => {
      const l = await ledger();
      const c = claim({ playStartedAt: T0, minPlayMs: 20_000, proofNonce: 'nonce-early' });
      const early = await l.claim(c, NO_LIMITS, T0 + 5_000);
      expect(early).toMatchObject({ kind: 'created', entry: { state: 'deferred', reason: 'too_early' } });
      expect(early).not.toHaveProperty('event');
      expect(await l.budgetUsed('2026-11-22')).toBe(0);
      expect((await l.claim({ ...c, id: randomUUID() }, NO_LIMITS, T0 + 19_999)).entry.reason).toBe('too_early');
      expect(await l.claim({ ...c, id: randomUUID() }, NO_LIMITS, T0 + 20_000)).toMatchObject({ kind: 'created', entry: { id: early.entry.id, state: 'sending' } });
      expect(await l.history(c.userId, 10)).toHaveLength(1);
    });

    it('counts the players an address links per day, again-links free, exactly under a race', async () => {
      const l = await ledger();
      const linked = await Promise.all(Array.from({ length: 10 }, (_, i) => l.linkAddress('203.0.113.7', '2026-11-22', `u${i}`, 3)));
      expect(linked.filter(Boolean)).toHaveLength(3);
      const first = linked.indexOf(true);
      expect(await l.linkAddress('203.0.113.7', '2026-11-22', `u${first}`, 3)).toBe(true);
      expect(await l.linkAddress('203.0.113.8', '2026-11-22', 'u9', 3)).toBe(true);
      expect(await l.linkAddress('203.0.113.7', '2026-11-23', 'u9', 3)).toBe(true);
      expect(await l.linkAddress('203.0.113.7', '2026-11-22', 'u-new', 0)).toBe(true);
      expect((await l.linkedPlayers('203.0.113.7', '2026-11-22')).sort()).toEqual([...linked.flatMap((ok, i) => (ok ? [`u${i}`] : [])), 'u-new'].sort());
      expect(await l.linkedPlayers('203.0.113.9', '2026-11-22')).toEqual([]);
    });

    it("forgets what only past days' limits read (address links, spent nonces), and keeps today's and the ledger", async () => {
      const l = await ledger();
      const PAST = T0 - 3 * 86_400_000;
      const capped: ClaimLimits = { userDailyCapSats: 21, dailyBudgetSats: 0, addressDailyCapSats: 1000 };
      const old = await l.claim(claim({ achievementId: 'old', proofNonce: 'nonce-old', address: '203.0.113.7' }), capped, PAST);
      expect(await l.linkAddress('203.0.113.7', '2026-11-19', 'user-1', 1)).toBe(true);
      expect((await l.claim(claim({ achievementId: 'today', proofNonce: 'nonce-today', address: '203.0.113.7' }), capped, T0)).entry.state).toBe('sending');
      expect(await l.linkAddress('203.0.113.7', '2026-11-22', 'user-1', 1)).toBe(true);
      // A bot farm's day: more links than one chunk of pruning.
      await Promise.all(Array.from({ length: 1001 }, (_, i) => l.linkAddress('198.51.100.9', '2026-11-18', `bot-${i}`, 0)));

      // As the relay asks on 2026-11-22: days before yesterday, nonces spent before a day ago.
      expect(await l.prune!('2026-11-21', T0 - 86_400_000, T0 - 86_400_000)).toBeGreaterThanOrEqual(1003);
      expect(await l.prune!('2026-11-21', T0 - 86_400_000, T0 - 86_400_000)).toBe(0);

      // The past day's link and nonce are forgotten; today's still count.
      expect(await l.linkAddress('203.0.113.7', '2026-11-19', 'user-2', 1)).toBe(true);
      expect(await l.linkAddress('203.0.113.7', '2026-11-22', 'user-2', 1)).toBe(false);
      expect((await l.claim(claim({ userId: 'user-3', proofNonce: 'nonce-old' }), NO_LIMITS, T0)).entry.state).toBe('sending');
      expect((await l.claim(claim({ userId: 'user-4', proofNonce: 'nonce-today' }), NO_LIMITS, T0)).entry.reason).toBe('proof_used');
      expect((await l.claim(claim({ achievementId: 'more' }), capped, T0)).entry.reason).toBe('user_daily_cap');
      // The ledger and the project's daily total are kept.
      expect((await l.get(old.entry.id))?.state).toBe('sending');
      expect(await l.budgetUsed('2026-11-19')).toBe(21);
    });

    it('a denied claim cannot be claimed again for RELAY_DENIAL_COOLDOWN_HOURS: denied_recently from the denial on, by userId and achievement; 0: off', async () => {
      const { ledger: l, events } = await store();
      const limits: ClaimLimits = { ...NO_LIMITS, denialCooldownHours: 24 };
      const golden = (over: Partial<NewClaim> = {}) => claim({ achievementId: 'golden', repeat: { kind: 'cooldown', seconds: 0 }, hold: true, ...over });
      const held = await l.claim(golden(), limits, T0);
      expect(held.entry.state).toBe('held');
      // Denied an hour after the claim: the cooldown counts from the denial, not from the claim.
      const deniedAt = T0 + 3_600_000;
      await l.settle(held.entry.id, 'deny', { state: 'rejected', reason: 'denied_by_operator' }, { now: deniedAt, audit: { actor: 'ann', action: 'deny' } });
      for (let i = 0; i < 15; i++) expect((await l.claim(golden(), limits, deniedAt + i * 60_000)).entry).toMatchObject({ state: 'rejected', reason: 'denied_recently' });
      expect((await l.claim(golden(), limits, deniedAt + 24 * 3_600_000 - 1)).entry.reason).toBe('denied_recently');
      // Before it, a spent proof says so; other players and other achievements are not touched.
      expect((await l.claim(golden({ proofNonce: 'n-1' }), limits, deniedAt + 1)).entry.reason).toBe('denied_recently');
      expect((await l.claim(golden({ proofNonce: 'n-1' }), limits, deniedAt + 2)).entry.reason).toBe('proof_used');
      expect((await l.claim(golden({ userId: 'user-2' }), limits, deniedAt + 1)).entry.state).toBe('held');
      expect((await l.claim(golden({ achievementId: 'silver' }), limits, deniedAt + 1)).entry.state).toBe('held');
      // Without the setting, or at 0, a denial refuses nothing later; after the cooldown, held again.
      expect((await l.claim(golden(), { ...NO_LIMITS, denialCooldownHours: 0 }, deniedAt + 2)).entry.state).toBe('held');
      const after = await l.claim(golden(), limits, deniedAt + 24 * 3_600_000);
      expect(after.entry.state).toBe('held');
      expect((await l.inState('held')).filter((e) => e.userId === 'user-1' && e.achievementId === 'golden').map((e) => e.id)).toHaveLength(2);
      // The player hears each refusal with its reason.
      expect((await events.since('user-1', 0, 100)).map((e) => (e.data as RewardRecord).reason).filter((r) => r === 'denied_recently')).toHaveLength(17);
    });

    it('records the gamertag the claim carried on the entry (the held table shows it); a payment later records the one it paid', async () => {
      const l = await ledger();
      const held = await l.claim(claim({ gamertag: 'ada', hold: true }), NO_LIMITS, T0);
      expect(held.entry).toMatchObject({ state: 'held', gamertag: 'ada' });
      expect((await l.inState('held'))[0]).toMatchObject({ gamertag: 'ada' });
      const sent = await l.claim(claim({ gamertag: 'grace', achievementId: 'b' }), NO_LIMITS, T0);
      expect(sent.entry.gamertag).toBe('grace');
      expect((await l.settle(sent.entry.id, 'settle', { state: 'paid', paymentId: 'tx-1', gamertag: 'grace-paid' }))?.entry.gamertag).toBe('grace-paid');
      // A deferred key claimed again records the gamertag of the claim that decides it.
      const early = claim({ gamertag: 'old-tag', achievementId: 'c', playStartedAt: T0, minPlayMs: 10_000 });
      expect((await l.claim(early, NO_LIMITS, T0)).entry).toMatchObject({ state: 'deferred', gamertag: 'old-tag' });
      expect((await l.claim({ ...early, id: randomUUID(), gamertag: 'new-tag' }, NO_LIMITS, T0 + 10_000)).entry).toMatchObject({ state: 'sending', gamertag: 'new-tag' });
    });

    it('too-early claims accumulate no rows: one deferred row per key, updated, and pruned a day after its last claim (with nothing else)', async () => {
      const l = await ledger();
      const early = (key: string) => claim({ idempotencyKey: key, achievementId: 'marathon', repeat: { kind: 'cooldown', seconds: 0 }, playStartedAt: T0, minPlayMs: 3_600_000 });
      const key = randomUUID();
      for (let i = 0; i < 30; i++) {
        const again = await l.claim({ ...early(key), id: randomUUID() }, NO_LIMITS, T0 + i * 1000);
        expect(again.entry).toMatchObject({ state: 'deferred', reason: 'too_early' });
      }
      const rows = await l.history('user-1', 100);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ state: 'deferred', createdAt: T0 + 29_000 });
      // A bot's new key per try: more than a chunk of pruning. And what is not deferred stays.
      for (let i = 0; i < 1001; i++) await l.claim(early(`bot-${i}`), NO_LIMITS, T0);
      const paid = await l.claim(claim({ achievementId: 'kept' }), NO_LIMITS, T0);
      const fresh = await l.claim(early('fresh'), NO_LIMITS, T0 + 86_400_000);
      // As the relay asks a day and a bit later: deferred entries last claimed before a day ago.
      const dayAgo = T0 + 86_400_000 + 3_600_000 - 86_400_000;
      expect(await l.prune!('2026-11-21', 0, dayAgo)).toBe(1002);
      expect(await l.prune!('2026-11-21', 0, dayAgo)).toBe(0);
      expect((await l.history('user-1', 2000)).map((e) => e.id).sort()).toEqual([paid.entry.id, fresh.entry.id].sort());
      // The key claims again, decided whole, as new.
      expect(await l.claim(early(key), NO_LIMITS, T0 + 2 * 86_400_000)).toMatchObject({ kind: 'created', entry: { state: 'sending' } });
    });

    it("tells each state in exactly the record a client reads (the event's data is toRewardRecord of the entry)", async () => {
      const { ledger: l } = await store();
      const first = await l.claim(claim(), NO_LIMITS, T0 + 123);
      const refused = await l.claim(claim(), NO_LIMITS, T0 + 456);
      expect(refused.kind === 'created' && refused.event?.data).toEqual(toRewardRecord(refused.entry));
      const review = await l.settle(first.entry.id, 'settle', { state: 'needs_review', reason: 'timeout', paymentId: 'tx-r' }, { now: T0 + 789 });
      expect(review?.event?.data).toEqual(toRewardRecord(review!.entry));
      const paid = await l.settle(first.entry.id, 'late_answer', { state: 'paid', paymentId: 'tx-r' }, { now: T0 + 1001 });
      expect(paid?.event?.data).toEqual(toRewardRecord(paid!.entry));
      expect(paid?.event?.data).toMatchObject({ status: 'paid', settledAt: new Date(T0 + 1001).toISOString(), createdAt: new Date(T0 + 123).toISOString() });
      const other = await l.claim(claim({ achievementId: 'b' }), NO_LIMITS, T0);
      const failed = await l.settle(other.entry.id, 'settle', { state: 'failed', reason: 'payment_refused' }, { now: T0 + 2 });
      expect(failed?.event?.data).toEqual(toRewardRecord(failed!.entry));
    });

    it('stores what it is given exactly, quotes, backslashes and all (nothing of a claim is taken as SQL)', async () => {
      const l = await ledger();
      const odd = { userId: "o'brien\\'; DROP TABLE rewards; --", idempotencyKey: "k'$1\\x", achievementId: "a$2'b", occurredAt: "2026-11-22T10:00:00.000Z'" };
      const r = await l.claim(claim(odd), NO_LIMITS, T0);
      expect(r).toMatchObject({ kind: 'created', entry: { ...odd, state: 'sending' } });
      expect(await l.find(odd.userId, odd.idempotencyKey)).toMatchObject(odd);
      expect(await l.claim(claim(odd), NO_LIMITS, T0 + 1)).toMatchObject({ kind: 'existing', entry: { id: r.entry.id } });
      expect((await l.claim(claim({ ...odd, idempotencyKey: "other'key" }), NO_LIMITS, T0 + 2)).entry).toMatchObject({ state: 'rejected', reason: 'already_claimed' });
    });
  });
}
