import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { type NewClaim, openPgStore, type RelayStore } from '../../src/relay/index.js';
import { freshDatabase, POSTGRES_HOW } from '../helpers/postgres.js';
import { balanceLedgerContract } from './balance-ledger-contract.js';
import { ledgerContract } from './ledger-contract.js';
import { streakContract } from './ledger-streak-contract.js';
import { referralStoreContract } from './referral-store-contract.js';

const url = inject('postgresUrl');
const NONE = { userDailyCapSats: 0, dailyBudgetSats: 0 };
const T0 = Date.parse('2026-11-22T10:00:00Z');
const claimOf = (userId: string, over: Partial<NewClaim> = {}): NewClaim => ({
  id: randomUUID(),
  userId,
  idempotencyKey: randomUUID(),
  requestHash: 'h',
  achievementId: 'coin',
  sats: 5,
  repeat: { kind: 'once' },
  ...over,
});

/** A store on a fresh database, and a connection of another relay's to the same database. */
async function withOtherRelay(test: (store: RelayStore, other: pg.Client) => Promise<void>) {
  const db = await freshDatabase(url!, { migrated: true });
  const store = await openPgStore(db, { owner: 'test-relay', leaseMs: 60_000 });
  const other = new pg.Client({ connectionString: db });
  await other.connect();
  try {
    await test(store, other);
  } finally {
    await other.end();
    await store.close();
  }
}

/** A promise, and whether it has settled yet. */
function watched<T>(p: Promise<T>) {
  const w = { done: false, promise: p };
  void p.finally(() => (w.done = true));
  return w;
}

// Without a server the contract's tests are listed as skipped, each by name (CI=true fails instead: test/global-setup.ts).
describe.skipIf(!url)(url ? 'on PostgreSQL' : `on PostgreSQL (skipped: ${POSTGRES_HOW})`, () => {
  ledgerContract('PostgreSQL', async () => openPgStore(await freshDatabase(url, { migrated: true }), { owner: 'test-relay', leaseMs: 60_000 }));
  streakContract('PostgreSQL', async () => openPgStore(await freshDatabase(url, { migrated: true }), { owner: 'test-relay', leaseMs: 60_000 }));
  balanceLedgerContract('PostgreSQL', async () => openPgStore(await freshDatabase(url, { migrated: true }), { owner: 'test-relay', leaseMs: 60_000 }));
  referralStoreContract('PostgreSQL', async () => openPgStore(await freshDatabase(url, { migrated: true }), { owner: 'test-relay', leaseMs: 60_000 }));

  // Calls made in one turn go to PostgreSQL together (store/postgres/group.ts): each must still be
  // answered as if it had gone alone.
  it('answers each settlement and recovery point of a group as if alone: a second one of an entry loses, a value PostgreSQL refuses fails only its own', () =>
    withOtherRelay(async (store) => {
      const l = store.ledger;
      const ids: string[] = [];
      for (const userId of ['ann', 'bob', 'ann', 'cy']) ids.push((await l.claim(claimOf(userId, { repeat: { kind: 'cooldown', seconds: 0 } }), NONE)).entry.id);
      const [a, b, c, d] = ids as [string, string, string, string];

      expect(await Promise.all([l.markSent(a), l.markSent(a), l.markSent(b), l.markSent(c), l.markSent(d)])).toEqual([true, false, true, true, true]);

      const settled = await Promise.allSettled([
        l.settle(a, 'settle', { state: 'paid', paymentId: 'tx-a' }),
        l.settle(a, 'settle', { state: 'failed', reason: 'payment_refused' }),
        l.settle(b, 'settle', { state: 'paid', paymentId: 'tx-\u0000' }),
        l.settle(c, 'settle', { state: 'paid', paymentId: 'tx-c' }),
        l.settle(d, 'settle', { state: 'needs_review', reason: 'timeout' }, { audit: { actor: 'ops', action: 'test' } }),
      ]);
      expect(settled.map((r) => (r.status === 'fulfilled' ? (r.value ? `${r.value.from}→${r.value.entry.state}` : 'unchanged') : 'refused'))).toEqual([
        'sending→paid',
        'unchanged',
        'refused',
        'sending→paid',
        'sending→needs_review',
      ]);
      expect((await l.get(a))?.paymentId).toBe('tx-a');
      expect((await l.get(b))?.state).toBe('sending');
      expect(await l.audits(d)).toMatchObject([{ actor: 'ops', fromState: 'sending', toState: 'needs_review' }]);
      // One reward event per settlement that happened, each in its player's order.
      const told = async (userId: string) => (await store.events.since(userId, 0)).map((e) => `${(e.data as { id: string }).id}:${(e.data as { status: string }).status}`).sort();
      expect(await told('ann')).toEqual([`${a}:paid`, `${c}:paid`].sort());
      expect(await told('bob')).toEqual([]);
      expect(await told('cy')).toEqual([`${d}:needs_review`]);
    }));

  it('decides each claim of a group as if alone: a known key is its own answer, a deferred key is claimed again, a refusal is told', () =>
    withOtherRelay(async (store) => {
      const l = store.ledger;
      const known = claimOf('ann');
      const early = claimOf('bob', { playStartedAt: T0, minPlayMs: 20_000 });
      await l.claim(known, NONE, T0);
      expect((await l.claim(early, NONE, T0 + 1)).entry.state).toBe('deferred');
      await l.claim(claimOf('cy'), NONE, T0);
      const at = T0 + 30_000;
      const outcome = (r: Awaited<ReturnType<typeof l.claim>>) =>
        `${r.kind}:${r.entry.state}${r.entry.reason ? `:${r.entry.reason}` : ''}${'event' in r && r.event ? ':told' : ''}`;

      // In one group: ann's key again, cy's achievement again (once), a new player.
      const group = await Promise.all([l.claim({ ...known, id: randomUUID() }, NONE, at), l.claim(claimOf('cy'), NONE, at), l.claim(claimOf('dee'), NONE, at)]);
      expect(group.map(outcome)).toEqual(['existing:sending', 'created:rejected:already_claimed:told', 'created:sending']);
      expect(group[0]!.entry.id).toBe(known.id);

      // With bob's deferred key due among them: the group is run claim by claim, to the same answers.
      const withReclaim = await Promise.all([l.claim({ ...early, id: randomUUID() }, NONE, at), l.claim(claimOf('cy'), NONE, at), l.claim(claimOf('eve'), NONE, at)]);
      expect(withReclaim.map(outcome)).toEqual(['created:sending', 'created:rejected:already_claimed:told', 'created:sending']);
      expect(withReclaim[0]!.entry.id).toBe(early.id);

      const told = (await store.events.since('cy', 0)).map((e) => (e.data as { reason?: string }).reason);
      expect(told).toEqual(['already_claimed', 'already_claimed']);
      expect(await l.history('bob', 10)).toHaveLength(1);
    }));

  it('does not hold up a group for a player whose lock another relay holds: that claim waits, the others are made', () =>
    withOtherRelay(async (store, other) => {
      const l = store.ledger;
      // Another relay in the middle of ann's claim: her lock taken, not yet committed.
      await other.query(`BEGIN; SELECT pg_advisory_xact_lock(hashtextextended('u:ann', 0))`);
      const ann = watched(l.claim(claimOf('ann'), NONE));
      const others = await Promise.all([l.claim(claimOf('bob'), NONE), l.claim(claimOf('cy'), NONE)]);
      expect(others.map((r) => r.entry.state)).toEqual(['sending', 'sending']);
      expect(ann.done).toBe(false);
      await other.query('COMMIT');
      expect((await ann.promise).entry.state).toBe('sending');
    }));

  it('does not hold up a group of settlements for a player whose event lock another relay holds', () =>
    withOtherRelay(async (store, other) => {
      const l = store.ledger;
      const [ann, bob, cy] = await Promise.all(['ann', 'bob', 'cy'].map(async (u) => (await l.claim(claimOf(u), NONE)).entry.id));
      // Another relay appending to ann's events: her event lock taken, not yet committed.
      await other.query(`BEGIN; SELECT pg_advisory_xact_lock(hashtextextended('e:ann', 1))`);
      const annPaid = watched(l.settle(ann!, 'settle', { state: 'paid', paymentId: 'tx-ann' }));
      const others = await Promise.all([l.settle(bob!, 'settle', { state: 'paid', paymentId: 'tx-bob' }), l.settle(cy!, 'settle', { state: 'paid', paymentId: 'tx-cy' })]);
      expect(others.map((r) => r?.entry.state)).toEqual(['paid', 'paid']);
      expect(annPaid.done).toBe(false);
      await other.query('COMMIT');
      expect((await annPaid.promise)?.entry.state).toBe('paid');
      expect((await store.events.since('ann', 0)).map((e) => (e.data as { status: string }).status)).toEqual(['paid']);
    }));

  it("counts a group's budget per day: claims on either side of midnight each have their own day's budget", () =>
    withOtherRelay(async (store) => {
      const budget = { userDailyCapSats: 0, dailyBudgetSats: 5 };
      const midnight = Date.parse('2026-11-23T00:00:00Z');
      const both = await Promise.all([store.ledger.claim(claimOf('ann'), budget, midnight - 100), store.ledger.claim(claimOf('bob'), budget, midnight + 100)]);
      expect(both.map((r) => `${r.entry.state}${r.entry.reason ? `:${r.entry.reason}` : ''}`)).toEqual(['sending', 'sending']);
      expect(await store.ledger.budgetUsed('2026-11-22')).toBe(5);
      expect(await store.ledger.budgetUsed('2026-11-23')).toBe(5);
      expect((await store.ledger.claim(claimOf('cy'), budget, midnight + 200)).entry.reason).toBe('daily_budget');
    }));

  it('does not hold up later calls behind one that waits for a lock held elsewhere, even when it came alone', () =>
    withOtherRelay(async (store, other) => {
      const l = store.ledger;
      await other.query(`BEGIN; SELECT pg_advisory_xact_lock(hashtextextended('u:ann', 0))`);
      const ann = watched(l.claim(claimOf('ann'), NONE));
      await new Promise((r) => setImmediate(r)); // ann's claim goes out on its own, before bob's comes
      expect((await l.claim(claimOf('bob'), NONE)).entry.state).toBe('sending');
      expect(ann.done).toBe(false);
      await other.query('COMMIT');
      expect((await ann.promise).entry.state).toBe('sending');
    }));

  // A group that cannot be made together is made again call by call; a later call on the same key
  // waits in the next group until those have ended, as it would have behind them alone.
  it("keeps two settlements of one entry in order when the first one's group is made call by call (a value PostgreSQL refuses)", () =>
    withOtherRelay(async (store, other) => {
      const l = store.ledger;
      const a = (await l.claim(claimOf('ann'), NONE)).entry.id;
      const b = (await l.claim(claimOf('bob'), NONE)).entry.id;
      // Held elsewhere for a moment: made alone, a's settlement waits for it.
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM rewards WHERE id = $1 FOR UPDATE', [a]);
      const first = [
        // A lone surrogate: jsonb refuses the group's batch, and b's own batch alone too.
        expect(l.settle(b, 'settle', { state: 'paid', paymentId: 'tx-\ud800' })).rejects.toMatchObject({ code: '22P02' }),
        l.settle(a, 'settle', { state: 'paid', paymentId: 'tx-a' }),
      ];
      const second = l.settle(a, 'settle', { state: 'failed', reason: 'payment_refused' });
      // Inside its transaction, `other` sees activity as of its first look unless it clears that snapshot.
      const waitingOnLock = async () => {
        await other.query('SELECT pg_stat_clear_snapshot()');
        return (await other.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")).rows[0]!.n;
      };
      await expect.poll(waitingOnLock).toBe(1);
      await other.query('COMMIT');
      await Promise.all(first);
      expect(await second).toBeUndefined();
      expect((await l.get(a))!.state).toBe('paid');
    }));

  // ReferralStore.forget deletes by a chunk's keys: a player seen there again while it waits for
  // the row is no longer to forget (the self-referral check reads it).
  it('forgets no address where a player was seen again while the delete waited for its row', () =>
    withOtherRelay(async (store, other) => {
      const r = store.referrals!;
      const DAY = 86_400_000;
      await r.seen('bob', '203.0.113.9', T0 - 40 * DAY);
      // Another relay's seen(), not yet committed: bob is at that address again, now.
      await other.query('BEGIN');
      await other.query(`UPDATE player_addresses SET at = $1 WHERE user_id = 'bob'`, [T0]);
      const forgetting = r.forget!(T0 - 31 * DAY);
      const waitingOnLock = async () => {
        await other.query('SELECT pg_stat_clear_snapshot()');
        return (await other.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")).rows[0]!.n;
      };
      await expect.poll(waitingOnLock).toBe(1);
      await other.query('COMMIT');
      expect(await forgetting).toBe(0);
      expect(await r.seenSince('bob', '203.0.113.9', T0 - 30 * DAY)).toBe(true);
    }));

  it('frees the budget of what a group settles as failed, and keeps what it pays', () =>
    withOtherRelay(async (store) => {
      const l = store.ledger;
      const budget = { userDailyCapSats: 0, dailyBudgetSats: 100 };
      const ids = await Promise.all(['ann', 'bob', 'cy'].map(async (u) => (await l.claim(claimOf(u), budget, T0)).entry.id));
      expect(await l.budgetUsed('2026-11-22')).toBe(15);
      await Promise.all([
        l.settle(ids[0]!, 'settle', { state: 'paid', paymentId: 'tx-ann' }),
        l.settle(ids[1]!, 'settle', { state: 'failed', reason: 'payment_refused' }),
        l.settle(ids[2]!, 'settle', { state: 'paid', paymentId: 'tx-cy' }),
      ]);
      expect(await l.budgetUsed('2026-11-22')).toBe(10);
      // The budget row agrees: a claim for the last 90 sats fits, one more does not.
      expect((await l.claim(claimOf('dee', { sats: 90 }), budget, T0)).entry.state).toBe('sending');
      expect((await l.claim(claimOf('eve', { sats: 1 }), budget, T0)).entry.reason).toBe('daily_budget');
    }));

  // A guest's merge decides on what it read, then writes: an operator's approval of one of the
  // guest's held credits committed in between must not be undone (SQLite makes the merge in one
  // write, so there it is either before or after the approval, never across it).
  it("keeps a guest's held credit approved while its merge waited to write credited, moved to the player, as SQLite would", () =>
    withOtherRelay(async (store, other) => {
      const l = store.ledger;
      const coin = { repeat: { kind: 'cooldown', seconds: 0 } as const, credit: true };
      const held = await l.claim(claimOf('guest_h', { ...coin, sats: 500, hold: true }), NONE, T0);
      expect(held.entry.state).toBe('held');
      // Another relay appending to the player's events: the merge reads its facts, then waits for that lock to write.
      await other.query(`BEGIN; SELECT pg_advisory_xact_lock(hashtextextended('e:ada', 1))`);
      const rules = { repeats: new Map([['coin', coin.repeat]]), limits: NONE };
      const merging = watched(l.mergeGuest!('guest_h', 'ada', rules, { actor: 'player:ada', action: 'merge guest_h' }, T0 + 10));
      const waitingOnLock = async () => {
        await other.query('SELECT pg_stat_clear_snapshot()');
        return (await other.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")).rows[0]!.n;
      };
      await expect.poll(waitingOnLock).toBe(1);
      const approved = await l.settle(held.entry.id, 'approve', { state: 'credited' }, { now: T0 + 20, audit: { actor: 'ann', action: 'approve' }, limits: NONE });
      expect(approved?.entry).toMatchObject({ userId: 'guest_h', state: 'credited' });
      expect(merging.done).toBe(false);
      await other.query('COMMIT');
      const merged = await merging.promise;
      expect(merged.moved.map((s) => [s.entry.id, s.from, s.entry.state])).toEqual([[held.entry.id, 'credited', 'credited']]);
      expect(await l.get(held.entry.id)).toMatchObject({ userId: 'ada', state: 'credited' });
      expect((await l.balance!('ada', T0 + 30)).creditedSats).toBe(500);
      expect((await l.audits(held.entry.id)).map((a) => [a.actor, a.fromState, a.toState])).toEqual([
        ['ann', 'held', 'credited'],
        ['player:ada', 'credited', 'credited'],
      ]);
    }));

  // An approval on a later day decides the credit again against its player's cap that day; a
  // merge that moved the guest's held credit to the player while the approval waited makes it the
  // player's cap (SQLite reads the entry's player in the same write as its decision).
  it('checks a held credit approved on a later day against the cap of the player it was merged into while the approval waited', () =>
    withOtherRelay(async (store, other) => {
      const l = store.ledger;
      const DAY = 86_400_000;
      const limits = { userDailyCapSats: 100, dailyBudgetSats: 100_000 };
      const coin = { repeat: { kind: 'cooldown', seconds: 0 } as const, credit: true };
      const held = await l.claim(claimOf('guest_d', { ...coin, sats: 80, hold: true }), limits, T0);
      expect(held.entry.state).toBe('held');
      // The player is at its cap the next day.
      expect((await l.claim(claimOf('ada', { ...coin, sats: 100 }), limits, T0 + DAY)).entry.state).toBe('credited');
      // Another relay holds the held credit's day's budget row: the approval reads the entry, then waits.
      await other.query('BEGIN');
      await other.query("SELECT 1 FROM budget WHERE day = '2026-11-22' FOR UPDATE");
      const approving = watched(
        l.settle(held.entry.id, 'approve', { state: 'credited' }, { now: T0 + DAY + 10, audit: { actor: 'ann', action: 'approve' }, limits }).catch((err: unknown) => err),
      );
      const waitingOnLock = async () => {
        await other.query('SELECT pg_stat_clear_snapshot()');
        return (await other.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")).rows[0]!.n;
      };
      await expect.poll(waitingOnLock).toBe(1);
      const rules = { repeats: new Map([['coin', coin.repeat]]), limits };
      const merged = await l.mergeGuest!('guest_d', 'ada', rules, { actor: 'player:ada', action: 'merge guest_d' }, T0 + DAY + 5);
      expect(merged.moved.map((s) => [s.entry.userId, s.entry.state])).toEqual([['ada', 'held']]);
      expect(approving.done).toBe(false);
      await other.query('COMMIT');
      expect(await approving.promise).toMatchObject({ name: 'DayLimitRefusal', reason: 'user_daily_cap' });
      expect(await l.get(held.entry.id)).toMatchObject({ userId: 'ada', state: 'held', day: '2026-11-22' });
      expect((await l.balance!('ada', T0 + DAY + 20)).creditedSats).toBe(100);
    }));

  // Once the rewards table is analyzed large, a claim group's estimated cost passes
  // jit_above_cost, and compiling it took 30 ms of CPU for a 1 ms statement: the relay made half
  // its rewards. A function made again by a later migration loses the setting unless it says it.
  it('runs every function that reads or writes the ledger without JIT, however large the tables grow', () =>
    withOtherRelay(async (_store, other) => {
      const { rows } = await other.query<{ proname: string; jit_off: boolean }>(
        "SELECT proname, coalesce(proconfig @> '{jit=off}', false) AS jit_off" +
          " FROM pg_proc WHERE proname LIKE 'rewardbus\\_%' AND prosrc ~ '\\m(rewards|events|budget)\\M' ORDER BY proname",
      );
      expect(rows.map((r) => r.proname)).toEqual(expect.arrayContaining(['rewardbus_apply', 'rewardbus_claim_facts', 'rewardbus_claim_facts_many']));
      expect(rows.filter((r) => !r.jit_off).map((r) => r.proname)).toEqual([]);
    }));

  // The relays set no bound for their sessions (a pooler in transaction mode refuses startup
  // options, or drops them): a function that waits for a lock carries its own lock_timeout, or a
  // call sent alone through a pooler would wait for it without end.
  it('bounds the lock waits of every function that locks or writes the ledger at 5 s, whatever the session sets', () =>
    withOtherRelay(async (_store, other) => {
      const { rows } = await other.query<{ proname: string; bounded: boolean }>(
        "SELECT proname, coalesce(proconfig @> '{lock_timeout=5s}', false) AS bounded FROM pg_proc " +
          "WHERE proname LIKE 'rewardbus\\_%' AND prosrc ~* '(advisory_xact_lock|FOR UPDATE|INSERT|UPDATE)' ORDER BY proname",
      );
      expect(rows.map((r) => r.proname)).toEqual(expect.arrayContaining(['rewardbus_apply', 'rewardbus_claim_facts', 'rewardbus_claim_facts_many']));
      expect(rows.filter((r) => !r.bounded).map((r) => r.proname)).toEqual([]);
    }));
});
