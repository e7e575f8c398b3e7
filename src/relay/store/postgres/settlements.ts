import type { Pool } from 'pg';
import type { TransitionName } from '../../core/lifecycle.js';
import type { AuditNote, Settled, Settlement } from '../../core/ports/ledger.js';
import { isStoreOutage } from '../../core/ports/outage.js';
import { APPLY_SQL, type AppliedRow, applyParams, settledOf, settlementChange, type UpdateChange } from './apply.js';
import { grouped, madeAlone } from './group.js';
import { BUSY_GROUPS, lockConflict } from './rows.js';

/** A settlement on its way to a group, with how many groups found its player's event lock held elsewhere. */
interface SettleCall {
  change: UpdateChange;
  busy: number;
}

/**
 * Settlements and recovery points on PostgreSQL, grouped (store/postgres/group.ts) on `groups`,
 * connections of their own. `owner` and `leaseMs`: this relay's, for an approved held entry it
 * goes on to send.
 */
export function pgSettlements(pool: Pool, groups: Pool, { owner, leaseMs }: { owner: string; leaseMs: number }) {
  /** One settlement in its own batch, waiting for its locks: each of a group stopped as a whole, and a busy one after a few groups. */
  async function settleAlone(change: UpdateChange): Promise<Settled | undefined> {
    const { rows } = await pool.query<AppliedRow>(APPLY_SQL, applyParams([change], true));
    return settledOf(rows[0]);
  }

  /**
   * Settlements grouped: one statement and one commit for the settlements that came while the
   * last group was under way, each a compare-and-set as if alone. A group holds one settlement of
   * an entry: a second goes in the next group, decided against what the first left. A group that
   * fails for one of its own (a value PostgreSQL refuses) is run again one by one, so each
   * settlement has its own answer; an outage fails them all, as it would have each.
   */
  const settleGrouped: (call: SettleCall, again?: boolean) => Promise<Settled | undefined> = grouped<SettleCall, Settled | undefined>(
    async (calls) => {
      let rows: AppliedRow[];
      try {
        ({ rows } = await groups.query<AppliedRow>(
          APPLY_SQL,
          applyParams(
            calls.map((c) => c.change),
            false,
          ),
        ));
      } catch (err) {
        if (isStoreOutage(err) && !lockConflict(err)) throw err;
        // Each alone (a group holds one settlement of an entry); a second settlement of one of these
        // entries waits for it.
        return calls.map(({ change }) => madeAlone(settleAlone(change)));
      }
      const byItem = new Map(rows.map((r) => [r.i, r]));
      // A busy one (its player's event lock held by another relay's group) goes in a later group, and after a few, alone.
      const later = ({ change, busy }: SettleCall) => (busy < BUSY_GROUPS ? settleGrouped({ change, busy: busy + 1 }, true) : madeAlone(settleAlone(change)));
      return calls.map((call, i) => (byItem.get(i)?.busy ? later(call) : settledOf(byItem.get(i))));
    },
    { keys: ({ change }) => [change.id] },
  );

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
    /** A transition of the lifecycle's table, as a compare-and-set on the states it leaves (and, for `release`, on the phase too). */
    settle: (id: string, name: TransitionName, to: Settlement, now: number, audit?: AuditNote) =>
      settleGrouped({ change: settlementChange(id, name, to, now, { owner, leaseMs }, audit), busy: 0 }),
    markSent: (id: string) => markSentGrouped(id),
  };
}
