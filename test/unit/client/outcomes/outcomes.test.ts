import { describe, expect, it, vi } from 'vitest';
import type { FinalEvent, RewardIntent, RewardOutcome } from '../../../../src/client/events.js';
import { Outcomes } from '../../../../src/client/outcomes/index.js';
import { LastEarned } from '../../../../src/client/rules/index.js';
import { createWriteBatch, memoryStorage, type RewardStorage } from '../../../../src/client/storage/index.js';
import type { TabMessage } from '../../../../src/client/tabs/index.js';
import type { RewardRecord } from '../../../../src/wire/relay-api.js';

const USER = 'user-1';

function record(id: string, status: string, extra: Partial<RewardRecord> = {}): RewardRecord {
  return {
    id,
    idempotencyKey: `key-${id}`,
    achievementId: 'first-coin',
    userId: USER,
    sats: 21,
    status: status as RewardRecord['status'],
    createdAt: '2026-11-23T10:00:00.000Z',
    ...extra,
  };
}

const intentFor = (r: RewardRecord): RewardIntent => ({
  id: r.idempotencyKey!,
  achievementId: r.achievementId,
  occurredAt: r.createdAt,
  userId: r.userId,
  attempts: 1,
  nextAttemptAt: 0,
});

/** An Outcomes on `storage`, recording what it says and tells other tabs. */
async function outcomesOn(storage: RewardStorage = memoryStorage()) {
  const said: Array<{ event: FinalEvent; outcome: RewardOutcome }> = [];
  const posted: TabMessage[] = [];
  const writes = createWriteBatch(storage, (err) => {
    throw err;
  });
  const earned = new LastEarned(
    () => undefined,
    () => 0,
  );
  const outcomes = new Outcomes({
    emit: (event, outcome) => said.push({ event, outcome }),
    storage,
    writes,
    tabs: { name: 'rewardbus:test', open: true, post: (m) => posted.push(m), close: () => undefined },
    earned,
    describe: (intent, rec, reason, remote) => ({ intent, ...(rec ? { record: rec } : {}), sats: rec?.sats ?? 0, gamertag: 'alice', ...(reason ? { reason } : {}), remote }),
  });
  await outcomes.follow(USER);
  /** Everything said so far, once the writes it waits for are stored. */
  const settledSaid = async () => {
    await writes.written;
    await writes.written;
    return said.map((s) => `${s.event}${s.outcome.afterReview ? ' after review' : ''}${s.outcome.afterHold ? ' (hold)' : ''}${s.outcome.remote ? ' (remote)' : ''}`);
  };
  return { outcomes, said, settledSaid, posted, writes, earned, storage };
}

describe('Outcomes', () => {
  it('says a reward being checked, then its payment once, marked as after review, however many copies arrive', async () => {
    const o = await outcomesOn();
    const review = record('r1', 'needs_review', { reason: 'payment_unclear' });
    o.outcomes.settle({ intent: intentFor(review), record: review, sats: 21, gamertag: 'alice', remote: false }, 'reward:review');
    expect(await o.settledSaid()).toEqual(['reward:review']);

    const paid = record('r1', 'paid', { paymentId: 'pay-1', settledAt: '2026-11-23T10:05:00.000Z' });
    o.outcomes.heardRecord(paid);
    o.outcomes.heardRecord(paid);
    o.outcomes.settle({ intent: intentFor(paid), record: paid, sats: 21, gamertag: 'alice', remote: true, afterReview: true }, 'reward:paid');
    o.outcomes.replaceHistory(USER, [paid]);
    expect(await o.settledSaid()).toEqual(['reward:review', 'reward:paid after review']);
    expect(o.outcomes.history).toEqual([paid]);
  });

  it('says a failure after review too, and nothing stale after a final outcome', async () => {
    const o = await outcomesOn();
    o.outcomes.heardRecord(record('r1', 'needs_review'));
    o.outcomes.heardRecord(record('r1', 'failed', { reason: 'payment_failed' }));
    // Another tab's copy of the review, arriving late.
    const review = record('r1', 'needs_review');
    o.outcomes.settle({ intent: intentFor(review), record: review, sats: 21, gamertag: 'alice', remote: true }, 'reward:review');
    o.outcomes.heardRecord(record('r1', 'paid'));
    expect(await o.settledSaid()).toEqual(['reward:review (remote)', 'reward:failed after review']);
    expect(o.said[1]!.outcome.reason).toBe('payment_failed');
  });

  it('treats a status it does not know as waiting, and says its settlement after review', async () => {
    const o = await outcomesOn();
    o.outcomes.heardRecord(record('r1', 'on_the_moon'));
    o.outcomes.heardRecord(record('r1', 'pending'));
    o.outcomes.heardRecord(record('r1', 'paid'));
    expect(await o.settledSaid()).toEqual(['reward:review (remote)', 'reward:paid after review']);
  });

  it('says a reward held for an operator once, then its approval or denial once, marked as after a hold', async () => {
    const o = await outcomesOn();
    const held = record('r1', 'held');
    o.outcomes.settle({ intent: intentFor(held), record: held, sats: 21, gamertag: 'alice', remote: false }, 'reward:held');
    o.outcomes.heardRecord(record('r1', 'held'));
    o.outcomes.heardRecord(record('r1', 'paid'));
    o.outcomes.heardRecord(record('r1', 'paid'));
    o.outcomes.heardRecord(record('r2', 'held', { idempotencyKey: 'key-r2' }));
    o.outcomes.heardRecord(record('r2', 'rejected', { idempotencyKey: 'key-r2', reason: 'denied_by_operator' }));
    expect(await o.settledSaid()).toEqual(['reward:held', 'reward:paid after review (hold)', 'reward:held (remote)', 'reward:rejected after review (hold)']);
  });

  it('on a later session, says the outcome of a hold it finds in the refreshed history, as after a hold', async () => {
    const storage = memoryStorage();
    const first = await outcomesOn(storage);
    const held = record('r1', 'held');
    first.outcomes.settle({ intent: intentFor(held), record: held, sats: 21, gamertag: 'alice', remote: false }, 'reward:held');
    await first.settledSaid();
    const second = await outcomesOn(storage);
    second.outcomes.replaceHistory(USER, [record('r1', 'paid')]);
    expect(await second.settledSaid()).toEqual(['reward:paid after review (hold)']);
  });

  it('says a claim the history showed as pending (deferred until its play time) as paid, not as after review', async () => {
    const o = await outcomesOn();
    o.outcomes.replaceHistory(USER, [record('r1', 'pending')]);
    const paid = record('r1', 'paid');
    o.outcomes.settle({ intent: intentFor(paid), record: paid, sats: 21, gamertag: 'alice', remote: false }, 'reward:paid');
    expect(await o.settledSaid()).toEqual(['reward:paid']);
  });

  it('on a later session, says a settlement it finds in the refreshed history, once', async () => {
    const storage = memoryStorage();
    const first = await outcomesOn(storage);
    const review = record('r1', 'needs_review');
    first.outcomes.settle({ intent: intentFor(review), record: review, sats: 21, gamertag: 'alice', remote: false }, 'reward:review');
    await first.settledSaid();

    const later = await outcomesOn(storage);
    expect(later.outcomes.history).toEqual([review]);
    const paid = record('r1', 'paid', { settledAt: '2026-11-24T09:00:00.000Z' });
    const other = record('r2', 'paid', { idempotencyKey: 'key-r2' });
    later.outcomes.replaceHistory(USER, [paid, other]);
    later.outcomes.replaceHistory(USER, [paid, other]);
    later.outcomes.heardRecord(paid);
    expect(await later.settledSaid()).toEqual(['reward:paid after review']);
    expect(later.said[0]!.outcome).toMatchObject({ intent: { id: 'key-r1' }, record: { status: 'paid' }, sats: 21, remote: false });
    // Told to the game's other tabs, as theirs to hear, not to show.
    expect(later.posted).toMatchObject([{ type: 'outcome', event: 'reward:paid', outcome: { afterReview: true, remote: true } }]);

    // And a third session finds it stored as paid: nothing to say.
    const third = await outcomesOn(storage);
    third.outcomes.replaceHistory(USER, [paid, other]);
    expect(await third.settledSaid()).toEqual([]);
  });

  it('says nothing on a fresh device whose history holds old outcomes it never showed as pending', async () => {
    const o = await outcomesOn();
    o.outcomes.replaceHistory(USER, [record('r1', 'paid'), record('r2', 'failed'), record('r3', 'needs_review')]);
    expect(await o.settledSaid()).toEqual([]);
    expect(o.outcomes.history.map((r) => r.id)).toEqual(['r1', 'r2', 'r3']);
  });

  it("says the stream's copy as this tab's own only while this tab sends it, with the intent the queue let go", async () => {
    const mine = record('r1', 'paid');
    const theirs = record('r2', 'paid');
    const o = await outcomesOn();
    o.outcomes.heardRecord(mine, intentFor(mine), true);
    o.outcomes.heardRecord(theirs, intentFor(theirs), false);
    expect(await o.settledSaid()).toEqual(['reward:paid', 'reward:paid (remote)']);
    expect(o.said[0]!.outcome.intent.attempts).toBe(1);
    // Only this tab's own outcome is told to the other tabs.
    expect(o.posted).toHaveLength(1);
  });

  it('says each outcome of a 1,000-intent backlog once, when the stream reconnects and resumes with copies of all of them', async () => {
    const o = await outcomesOn();
    const records = Array.from({ length: 1000 }, (_, i) => record(`r${i}`, 'paid'));
    // The queue drains the backlog while the stream is away: each is said on its HTTP answer.
    for (const r of records) o.outcomes.settle({ intent: intentFor(r), record: r, sats: 21, gamertag: 'alice', remote: false }, 'reward:paid');
    // The stream comes back and resumes after the last event it heard: every payment again.
    for (const r of records) o.outcomes.heardRecord(r);
    expect(await o.settledSaid()).toHaveLength(1000);
  });

  it('keeps the newest 100 records, writing one small key per outcome, and reloads them newest first', async () => {
    const storage = memoryStorage();
    const o = await outcomesOn(storage);
    const at = (n: number) => new Date(Date.UTC(2026, 10, 1) + n * 60_000).toISOString();
    o.outcomes.replaceHistory(
      USER,
      Array.from({ length: 100 }, (_, n) => record(`old${n}`, 'paid', { createdAt: at(100 - n) })),
    );
    await o.writes.written;
    const write = vi.spyOn(storage, 'write');
    o.outcomes.heardRecord(record('new', 'paid', { createdAt: at(500) }));
    await o.settledSaid();
    // One write: the new record's key set, the oldest's deleted.
    expect(write.mock.calls.map(([sets, dels]) => [sets.map(([k]) => k), dels])).toEqual([[[`reward:${USER}:new`], [`reward:${USER}:old99`]]]);

    const reloaded = await outcomesOn(storage);
    expect(reloaded.outcomes.history).toHaveLength(100);
    expect(reloaded.outcomes.history[0]!.id).toBe('new');
    expect(reloaded.outcomes.history[99]!.id).toBe('old98');
  });

  it('reads a history stored by an earlier version as one array', async () => {
    const storage = memoryStorage();
    await storage.setMany([[`history:${USER}`, [record('r1', 'needs_review')]]]);
    const o = await outcomesOn(storage);
    o.outcomes.replaceHistory(USER, [record('r1', 'paid')]);
    expect(await o.settledSaid()).toEqual(['reward:paid after review']);
    expect(await storage.get(`history:${USER}`)).toBeUndefined();
  });

  it("ignores another player's history and drops what unlock() knew when the history changes", async () => {
    const o = await outcomesOn();
    const drop = vi.spyOn(o.earned, 'drop');
    o.outcomes.replaceHistory('someone-else', [record('x', 'paid', { userId: 'someone-else' })]);
    expect(o.outcomes.history).toEqual([]);
    expect(drop).not.toHaveBeenCalled();
    o.outcomes.heardRecord(record('r1', 'paid'));
    expect(drop).toHaveBeenCalledWith('first-coin');
  });
});
