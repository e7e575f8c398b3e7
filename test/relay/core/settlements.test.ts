// The settlement core on a real store: what it publishes, counts and logs follows what was committed.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, openSqliteStore, type NewClaim, type PlayerEvent, type RewardRecord } from '../../../src/relay/index.js';
import { createSettlements } from '../../../src/relay/core/settlements.js';

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
  const settlements = createSettlements({ ledger: store.ledger, publish: (e) => published.push(e), metrics: { settled: (state, achievementId, sats, sinceMs) => void counted.push([state, achievementId, sats, sinceMs]) }, logger });
  const claim = (over: Partial<NewClaim> = {}): NewClaim => ({ id: randomUUID(), userId: 'u1', idempotencyKey: randomUUID(), requestHash: 'h', achievementId: 'first-coin', sats: 21, repeat: { kind: 'once' }, ...over });
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
    const paid = await settlements.settle(entry.id, { from: ['sending'], to: { state: 'paid', paymentId: 'tx' }, cause: 'payout' });
    expect(paid).toMatchObject({ state: 'paid', paymentId: 'tx' });
    expect(published).toEqual(await store.events.since('u1', 0));
    expect((published[0]!.data as RewardRecord).status).toBe('paid');
    expect(counted).toEqual([['paid', 'first-coin', 21, entry.createdAt]]);
    await expect.poll(() => flushLogs().filter((l) => l.event === 'settlement')).toMatchObject([{ cause: 'payout', from: 'sending', to: 'paid', rewardId: entry.id, paymentId: 'tx' }]);
  });

  it('does nothing after a compare-and-set that lost: no event, no count, no line', async () => {
    const { settlements, published, counted, claim } = await core();
    const { entry } = await settlements.claim(claim(), NO_LIMITS);
    await settlements.settle(entry.id, { from: ['sending'], to: { state: 'needs_review', reason: 'timeout' }, cause: 'payout' });
    const [a, b] = await Promise.all([
      settlements.settle(entry.id, { from: ['needs_review'], to: { state: 'paid', paymentId: 'tx' }, cause: 'late_answer' }),
      settlements.settle(entry.id, { from: ['needs_review'], to: { state: 'failed', reason: 'operator_marked_failed' }, cause: 'operator', audit: { actor: 'ann', action: 'mark-failed' } }),
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
    await settlements.settle(entry.id, { from: ['sending'], to: { state: 'needs_review', reason: 'timeout' }, cause: 'payout' });
    await settlements.settle(entry.id, { from: ['needs_review'], to: { state: 'paid', paymentId: 'tx' }, cause: 'operator', audit: { actor: 'ann', action: 'mark-paid' } });
    expect(await store.ledger.audits(entry.id)).toMatchObject([{ actor: 'ann', action: 'mark-paid', fromState: 'needs_review', toState: 'paid' }]);
  });
});
