import { escapeLiteral, type Pool } from 'pg';
import { mergeRefusal } from '../../core/claim-decision.js';
import { LIFECYCLE } from '../../core/lifecycle.js';
import type { AuditNote, GuestMerge } from '../../core/ports/ledger.js';
import type { Repeat } from '../../core/streak.js';
import { RESERVING_SQL } from '../ledger-row.js';
import { APPLY_SQL, type AppliedRow, applyParams, settledOf, type UpdateChange } from './apply.js';
import { BEGIN, inTransaction } from './transaction.js';

/** A row of the merge's facts: the guest marked merged, one of its credits, or one of the player's own reserving claims. */
type Fact = { what: 'merged' } | Credit | { what: 'theirs'; achievement_id: string; created_at: string };
type Credit = { what: 'credit'; id: string; achievement_id: string; created_at: string; used: boolean; n: string };

/**
 * Guests on PostgreSQL: a guest's credits merged into the player who linked, in one transaction
 * under both players' locks (the ones claims and withdrawals take, in a fixed order), through the
 * write primitive: each credit moved (credited, to the player) or dropped (rejected) by the
 * player's repeat rules (core/claim-decision.ts), audited and told.
 */
export function pgGuests(pool: Pool) {
  async function mergeGuest(guestId: string, userId: string, repeats: ReadonlyMap<string, Repeat>, audit: AuditNote, now: number): Promise<GuestMerge> {
    const locks = [guestId, userId]
      .sort()
      .map((u) => `SELECT pg_advisory_xact_lock(hashtextextended(${escapeLiteral(`u:${u}`)}, 0))`)
      .join('; ');
    return inTransaction<GuestMerge>(
      pool,
      async (c) => {
        // In one round trip: the guest marked merged (none of the rest when it already was), the
        // guest's credits, each with whether the player already used its key (the facts the
        // decision needs and no more: the whole rows come back from the primitive), and the
        // player's own reserving claims of those achievements. One statement, one snapshot, taken
        // under both players' locks as the three statements' were.
        const facts = (
          await c.query<Fact>(
            `WITH m AS (INSERT INTO merged_guests (guest_id, user_id, at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1),
             g AS (
               SELECT g.id, g.achievement_id, g.created_at, row_number() OVER (ORDER BY g.created_at, g.id) AS n,
                 EXISTS (SELECT 1 FROM rewards p WHERE p.user_id = $2 AND p.idempotency_key = g.idempotency_key) AS used
               FROM rewards g WHERE EXISTS (SELECT 1 FROM m) AND g.user_id = $1 AND g.kind = 'credit' AND g.state = 'credited')
             SELECT 'merged' AS what, NULL AS id, NULL AS achievement_id, NULL::bigint AS created_at, NULL::boolean AS used, NULL::bigint AS n FROM m
             UNION ALL SELECT 'credit', g.id, g.achievement_id, g.created_at, g.used, g.n FROM g
             UNION ALL SELECT 'theirs', NULL, r.achievement_id, r.created_at, NULL, NULL FROM rewards r
               WHERE r.user_id = $2 AND r.achievement_id IN (SELECT g.achievement_id FROM g) AND r.kind <> 'withdrawal' AND r.${RESERVING_SQL}`,
            [guestId, userId, now],
          )
        ).rows;
        if (!facts.some((f) => f.what === 'merged')) return { rollback: { merged: false, moved: [], dropped: [] } };
        // The credits in the order they were earned (the order the decision takes them in).
        const credits = facts.filter((f): f is Credit => f.what === 'credit').sort((a, b) => Number(a.n) - Number(b.n));
        const times = new Map<string, number[]>();
        for (const t of facts) if (t.what === 'theirs') times.set(t.achievement_id, [...(times.get(t.achievement_id) ?? []), Number(t.created_at)]);
        const changes: UpdateChange[] = credits.map((row) => {
          const at = Number(row.created_at);
          const mine = times.get(row.achievement_id) ?? [];
          times.set(row.achievement_id, mine);
          const reason = row.used ? 'already_claimed' : mergeRefusal(repeats.get(row.achievement_id), at, mine);
          if (!reason) mine.push(at);
          return {
            op: 'update',
            id: row.id,
            // A dropped credit stays the guest's, rejected: the player's own record is untouched.
            ...(reason ? {} : { user: userId }),
            from: LIFECYCLE.merge.from,
            unsent: false,
            state: reason ? 'rejected' : 'credited',
            reason: reason ?? null,
            payment: null,
            gamertag: null,
            settled: null,
            owner: null,
            lease: null,
            at: now,
            actor: audit.actor,
            action: audit.action,
            sats: null,
            day: null,
            created: null,
            setAddress: false,
            address: null,
            budgeted: null,
            kind: null,
          };
        });
        const applied = changes.length ? (await c.query<AppliedRow>(APPLY_SQL, applyParams(changes, true))).rows.sort((a, b) => a.i - b.i) : [];
        const out: GuestMerge = { merged: true, moved: [], dropped: [] };
        for (const a of applied) {
          const s = settledOf(a);
          if (s) (s.entry.state === 'rejected' ? out.dropped : out.moved).push(s);
        }
        return out;
      },
      `${BEGIN}; ${locks}`,
    );
  }

  return {
    mergeGuest,
    mergedInto: async (guestId: string) => (await pool.query<{ user_id: string }>('SELECT user_id FROM merged_guests WHERE guest_id = $1', [guestId])).rows[0]?.user_id,
    balancesOwed: async () =>
      Number(
        (
          await pool.query<{ owed: string }>(
            `SELECT coalesce(sum(CASE WHEN kind = 'credit' THEN sats ELSE -sats END), 0) AS owed FROM rewards
             WHERE (kind = 'credit' AND state = 'credited') OR (kind = 'withdrawal' AND ${RESERVING_SQL})`,
          )
        ).rows[0]!.owed,
      ),
  };
}
