import type { Pool } from 'pg';
import { isStoreOutage } from '../outage.js';
import type { AuditNote, Ledger, LedgerState, Settled } from '../ledger.js';
import { toLedgerEntry } from '../ledger-row.js';
import { grouped, madeAlone } from './group.js';
import { BUSY_GROUPS, eventOf, lockConflict, RESERVING, TOLD, type EventJson, type Row } from './rows.js';

/** A settlement as rewardbus_settle takes it, and as one item of rewardbus_settle_many (migration 10). */
interface SettleItem {
  id: string;
  from: readonly LedgerState[];
  state: LedgerState;
  reason: string | null;
  payment: string | null;
  gamertag: string | null;
  settled: number | null;
  owner: string | null;
  lease: number | null;
  actor: string | null;
  action: string | null;
  at: number;
  phase: 'claimed' | null;
}

/** A settlement on its way to a group, with how many groups found its player's event lock held elsewhere. */
interface SettleCall {
  item: SettleItem;
  busy: number;
}

/** A settlement's row as the functions answer it: the entry as it is now, its state before, its event. */
interface SettledRow {
  entry: Row;
  old_state: LedgerState;
  event: EventJson | null;
}

const settledOf = (row: SettledRow | undefined): Settled | undefined =>
  row && { entry: toLedgerEntry(row.entry), from: row.old_state, ...(row.event ? { event: eventOf(row.event) } : {}) };

/**
 * Settlements and recovery points on PostgreSQL, grouped (store/postgres/group.ts) on `groups`,
 * connections of their own. `owner` and `leaseMs`: this relay's, for an approved held entry it
 * goes on to send.
 */
export function pgSettlements(pool: Pool, groups: Pool, { owner, leaseMs }: { owner: string; leaseMs: number }) {
  /** One settlement in its own statement, waiting for its locks: each of a group stopped as a whole, and a busy one after a few groups. */
  async function settleAlone(x: SettleItem): Promise<Settled | undefined> {
    const { rows } = await pool.query<SettledRow>({
      text: 'SELECT * FROM rewardbus_settle($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)',
      values: [x.id, x.from, x.state, x.reason, x.payment, x.gamertag, x.settled, x.owner, x.lease, RESERVING, x.actor, x.action, x.at, TOLD, x.phase],
    });
    return settledOf(rows[0]);
  }

  /**
   * Settlements grouped: one statement and one commit for the settlements that came while the
   * last group was under way, each a compare-and-set as if alone. A group holds one settlement of
   * an entry: a second goes in the next group, decided against what the first left. A group that
   * fails for one of its own (a value PostgreSQL refuses) is run again one by one, so each
   * settlement has its own answer; an outage fails them all, as it would have each.
   */
  const settleGrouped: (call: SettleCall, again?: boolean) => Promise<Settled | undefined> = grouped<SettleCall, Settled | undefined>(async (calls) => {
    let rows: Array<SettledRow & { i: number; busy: boolean }>;
    try {
      ({ rows } = await groups.query<SettledRow & { i: number; busy: boolean }>({
        text: 'SELECT * FROM rewardbus_settle_many($1, $2, $3)',
        values: [JSON.stringify(calls.map(({ item }, i) => ({ ...item, i }))), RESERVING, TOLD],
      }));
    } catch (err) {
      if (isStoreOutage(err) && !lockConflict(err)) throw err;
      // Each alone (a group holds one settlement of an entry); a second settlement of one of these
      // entries waits for it.
      return calls.map(({ item }) => madeAlone(settleAlone(item)));
    }
    const byItem = new Map(rows.map((r) => [r.i, r]));
    // A busy one (its player's event lock held by another relay's group) goes in a later group, and after a few, alone.
    const later = ({ item, busy }: SettleCall) => (busy < BUSY_GROUPS ? settleGrouped({ item, busy: busy + 1 }, true) : madeAlone(settleAlone(item)));
    return calls.map((call, i) => (byItem.get(i)?.busy ? later(call) : settledOf(byItem.get(i))));
  }, { keys: ({ item }) => [item.id] });

  function settleItem(id: string, from: readonly LedgerState[], to: Parameters<Ledger['settle']>[2], now: number, audit?: AuditNote, phase?: 'claimed'): SettleItem {
    return {
      id,
      from,
      state: to.state,
      reason: 'reason' in to ? to.reason : null,
      payment: 'paymentId' in to ? (to.paymentId ?? null) : null,
      gamertag: 'gamertag' in to ? (to.gamertag ?? null) : null,
      settled: to.state === 'paid' || to.state === 'failed' ? now : null,
      owner: to.state === 'sending' ? owner : null,
      lease: to.state === 'sending' ? now + leaseMs : null,
      actor: audit?.actor ?? null,
      action: audit?.action ?? null,
      at: now,
      phase: phase ?? null,
    };
  }

  /**
   * Recovery points grouped likewise, one UPDATE for the group. Each is a compare-and-set on the
   * phase: of two marks of one entry in a group, the first wins, as it would have alone.
   *
   * Planned for each group's ids, and found by id only. A plan kept from the first groups (a
   * named statement) was made while the table was small and stayed a sequential scan; and on
   * `state = 'sending'` the planner took rewards_by_state, whose 'sending' entries are mostly of
   * payments long settled (every payment passes through it). `(…) IS TRUE` is no index's condition.
   */
  const markSentGrouped = grouped<string, boolean>(async (ids) => {
    const { rows } = await groups.query<{ id: string }>(
      `UPDATE rewards SET phase = 'sent' WHERE id = ANY($1::text[]) AND (state = 'sending') IS TRUE AND phase = 'claimed' RETURNING id`,
      [ids],
    );
    const marked = new Set(rows.map((r) => r.id));
    return ids.map((id) => marked.delete(id));
  });

  return {
    /** A compare-and-set from `from` (and, to release an unsent payment, on the phase too). */
    settle: (id: string, from: readonly LedgerState[], to: Parameters<Ledger['settle']>[2], now: number, audit?: AuditNote, phase?: 'claimed') =>
      settleGrouped({ item: settleItem(id, from, to, now, audit, phase), busy: 0 }),
    markSent: (id: string) => markSentGrouped(id),
  };
}
