// The settlement core on a real store: what it publishes, counts and logs follows what was committed.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ALL_STATES, LIFECYCLE, LifecycleError, type RewardState, type Transition, type TransitionName } from '../../../src/relay/core/lifecycle.js';
import type { Settlement } from '../../../src/relay/core/ports/ledger.js';
import { toRewardRecord } from '../../../src/relay/core/reward-record.js';
import { createSettlements } from '../../../src/relay/core/settlements.js';
import { createLogger, type NewClaim, openSqliteStore, type PlayerEvent, type RewardRecord } from '../../../src/relay/index.js';

const NO_LIMITS = { userDailyCapSats: 0, dailyBudgetSats: 0 };
const stores: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

async function core() {
  const store = openSqliteStore(join(mkdtempSync(join(tmpdir(), 'rewardbus-core-')), 'ledger.sqlite'));
  stores.push(store);
  await store.opened;
  const published: PlayerEvent[] = [];
  const counted: Array<[string, string, number, number | undefined]> = [];
  const logs: Array<Record<string, unknown>> = [];
  const logger = createLogger('info', { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const settlements = createSettlements({
    ledger: store.ledger,
    publish: (e) => published.push(e),
    metrics: { settled: (state, achievementId, sats, sinceMs) => void counted.push([state, achievementId, sats, sinceMs]) },
    logger,
  });
  const claim = (over: Partial<NewClaim> = {}): NewClaim => ({
    id: randomUUID(),
    userId: 'u1',
    idempotencyKey: randomUUID(),
    requestHash: 'h',
    achievementId: 'first-coin',
    sats: 21,
    repeat: { kind: 'once' },
    ...over,
  });
  const flushLogs = () => {
    logger.flush();
    return logs;
  };
  return { store, settlements, published, counted, flushLogs, claim };
}

describe('the settlement core', () => {
  it('publishes the stored event, counts the payout with its latency, and logs one line per change', async () => {
    const { store, settlements, published, counted, flushLogs, claim } = await core();
    const { entry } = await settlements.claim(claim(), NO_LIMITS);
    expect(published).toEqual([]); // sending: the player hears nothing yet
    const paid = await settlements.settle(entry.id, { transition: 'settle', to: { state: 'paid', paymentId: 'tx' }, cause: 'payout' });
    expect(paid).toMatchObject({ state: 'paid', paymentId: 'tx' });
    expect(published).toEqual(await store.events.since('u1', 0));
    expect((published[0]!.data as RewardRecord).status).toBe('paid');
    expect(counted).toEqual([['paid', 'first-coin', 21, entry.createdAt]]);
    await expect
      .poll(() => flushLogs().filter((l) => l.event === 'settlement'))
      .toMatchObject([{ cause: 'payout', from: 'sending', to: 'paid', rewardId: entry.id, paymentId: 'tx' }]);
  });

  it("answers a just-settled entry with the record its player was told, and builds any other entry's", async () => {
    const { settlements, published, claim } = await core();
    const first = (await settlements.claim(claim(), NO_LIMITS)).entry;
    const second = (await settlements.claim(claim({ achievementId: 'second-coin' }), NO_LIMITS)).entry;
    const paid = (await settlements.settle(first.id, { transition: 'settle', to: { state: 'paid', paymentId: 'tx' }, cause: 'payout' }))!;
    // The very record published: built once.
    expect(settlements.recordOf(paid)).toBe(published[0]!.data);
    expect(settlements.recordOf(paid)).toEqual(toRewardRecord(paid));
    // Another entry, or a settlement since: built from the entry, as it stands.
    expect(settlements.recordOf(second)).toEqual(toRewardRecord(second));
    await settlements.settle(second.id, { transition: 'settle', to: { state: 'failed', reason: 'x' }, cause: 'payout' });
    expect(settlements.recordOf(paid)).not.toBe(published[0]!.data);
    expect(settlements.recordOf(paid)).toEqual(published[0]!.data);
  });

  it('does nothing after a compare-and-set that lost: no event, no count, no line', async () => {
    const { settlements, published, counted, claim } = await core();
    const { entry } = await settlements.claim(claim(), NO_LIMITS);
    await settlements.settle(entry.id, { transition: 'settle', to: { state: 'needs_review', reason: 'timeout' }, cause: 'payout' });
    const [a, b] = await Promise.all([
      settlements.settle(entry.id, { transition: 'late_answer', to: { state: 'paid', paymentId: 'tx' }, cause: 'late_answer' }),
      settlements.settle(entry.id, {
        transition: 'mark_failed',
        to: { state: 'failed', reason: 'operator_marked_failed' },
        cause: 'operator',
        audit: { actor: 'ann', action: 'mark-failed' },
      }),
    ]);
    expect([a?.state, b?.state].filter(Boolean)).toHaveLength(1);
    expect(published.map((e) => (e.data as RewardRecord).status)).toEqual(['needs_review', a ? 'paid' : 'failed']);
    expect(counted.map((c) => c[0])).toEqual(['needs_review', a ? 'paid' : 'failed']);
  });

  it('tells a refusal at claim, counted without a payout latency', async () => {
    const { settlements, published, counted, claim } = await core();
    await settlements.claim(claim(), NO_LIMITS);
    const r = await settlements.claim(claim(), NO_LIMITS);
    expect(r.entry).toMatchObject({ state: 'rejected', reason: 'already_claimed' });
    expect(published.map((e) => (e.data as RewardRecord).status)).toEqual(['rejected']);
    expect(counted).toEqual([['rejected', 'first-coin', 21, undefined]]);
  });

  it('audits a decision by hand in the same transaction, naming the operator', async () => {
    const { store, settlements, claim } = await core();
    const { entry } = await settlements.claim(claim(), NO_LIMITS);
    await settlements.settle(entry.id, { transition: 'settle', to: { state: 'needs_review', reason: 'timeout' }, cause: 'payout' });
    await settlements.settle(entry.id, { transition: 'mark_paid', to: { state: 'paid', paymentId: 'tx' }, cause: 'operator', audit: { actor: 'ann', action: 'mark-paid' } });
    expect(await store.ledger.audits(entry.id)).toMatchObject([{ actor: 'ann', action: 'mark-paid', fromState: 'needs_review', toState: 'paid' }]);
  });
});

describe('the lifecycle table (core/lifecycle.ts), as the settlement core applies it', () => {
  type Reach = (s: Awaited<ReturnType<typeof core>>) => Promise<string>;
  // An entry in each state, reached the way the relay reaches it.
  const REACH: Record<RewardState, Reach> = {
    sending: async ({ settlements, claim }) => (await settlements.claim(claim(), NO_LIMITS)).entry.id,
    held: async ({ settlements, claim }) => (await settlements.claim(claim({ hold: true }), NO_LIMITS)).entry.id,
    rejected: async ({ settlements, claim }) => (await settlements.claim(claim({ rejectReason: 'claim_not_verified' }), NO_LIMITS)).entry.id,
    deferred: async ({ settlements, claim }) => (await settlements.claim(claim({ playStartedAt: Date.now(), minPlayMs: 60_000 }), NO_LIMITS)).entry.id,
    paid: async (s) => settled(s, { state: 'paid', paymentId: 'tx' }),
    failed: async (s) => settled(s, { state: 'failed', reason: 'payment_refused' }),
    needs_review: async (s) => settled(s, { state: 'needs_review', reason: 'timeout' }),
    credited: async ({ settlements, claim }) => (await settlements.claim(claim({ credit: true }), NO_LIMITS)).entry.id,
  };
  async function settled(s: Awaited<ReturnType<typeof core>>, to: Settlement) {
    const id = await REACH.sending(s);
    await s.settlements.settle(id, { transition: 'settle', to, cause: 'payout' });
    return id;
  }
  const AUDIT = { actor: 'ann', action: 'test' };
  const settlementTo = (state: RewardState): Settlement =>
    state === 'paid' ? { state, paymentId: 'tx-2' } : state === 'sending' || state === 'credited' ? { state } : ({ state, reason: 'test' } as Settlement);

  for (const state of ALL_STATES) {
    it(`refuses every transition that does not leave ${state}, and changes nothing`, async () => {
      const s = await core();
      const id = await REACH[state](s);
      const before = await s.store.ledger.get(id);
      const events = (await s.store.events.since(before!.userId, 0)).length;
      expect(before!.state).toBe(state);
      for (const [name, t] of Object.entries(LIFECYCLE) as Array<[TransitionName, Transition]>) {
        if (name === 'claim' || name === 'send' || t.from.includes(state)) continue;
        const r = await s.settlements.apply(id, { transition: name, to: settlementTo(t.to[0]!), cause: 'operator', ...(t.audit === 'required' ? { audit: AUDIT } : {}) });
        expect([name, r.kind]).toEqual([name, 'stale']);
      }
      expect(await s.store.ledger.get(id)).toEqual(before);
      expect(await s.store.events.since(before!.userId, 0)).toHaveLength(events);
    });
  }

  it('refuses a state a transition cannot reach, and a decision by hand without its audit note, before writing anything', async () => {
    const s = await core();
    const id = await REACH.needs_review(s);
    const before = await s.store.ledger.get(id);
    await expect(s.settlements.apply(id, { transition: 'late_answer', to: { state: 'sending' }, cause: 'late_answer' })).rejects.toThrow(LifecycleError);
    await expect(s.settlements.apply(id, { transition: 'mark_paid', to: { state: 'paid', paymentId: 'x' }, cause: 'operator' })).rejects.toThrow(/audit note/);
    await expect(s.settlements.apply(id, { transition: 'late_answer', to: { state: 'paid', paymentId: 'x' }, cause: 'late_answer', audit: AUDIT })).rejects.toThrow(
      /not a decision by hand/,
    );
    expect(await s.store.ledger.get(id)).toEqual(before);
  });

  it('frees exactly what each reserving state reserved, and reserves again on the way back (a contradiction)', async () => {
    const s = await core();
    const day = new Date().toISOString().slice(0, 10);
    const id = await REACH.sending(s);
    expect(await s.store.ledger.budgetUsed(day)).toBe(21);
    await s.settlements.settle(id, { transition: 'settle', to: { state: 'failed', reason: 'payment_refused' }, cause: 'payout' });
    expect(await s.store.ledger.budgetUsed(day)).toBe(0);
    await s.settlements.settle(id, { transition: 'contradict', to: { state: 'needs_review', reason: 'contradicted' }, cause: 'late_answer', audit: AUDIT });
    expect(await s.store.ledger.budgetUsed(day)).toBe(21);
  });
});
