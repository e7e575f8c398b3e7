import { escapeLiteral, type Pool } from 'pg';
import { mergeDecider, mergeReadsDays } from '../../core/claim-decision.js';
import { LIFECYCLE } from '../../core/lifecycle.js';
import type { AuditNote, GuestMerge, LedgerState, MergeRules } from '../../core/ports/ledger.js';
import { MERGED_SQL, RESERVING_SQL } from '../ledger-row.js';
import { APPLY_SQL, type AppliedRow, applyParams, settledOf, type UpdateChange } from './apply.js';
import { BEGIN, inTransaction } from './transaction.js';

/** A row of the merge's facts: the guest marked merged (or merged before into this player: `again`), one of its credits, one of the player's own reserving claims, or a day the player reserved. */
type Fact =
  | { what: 'merged' }
  | { what: 'again' }
  | Credit
  | { what: 'theirs'; achievement_id: string; created_at: string }
  | { what: 'day'; day: string; sats: string; usd_micros: string };
type Credit = {
  what: 'credit';
  id: string;
  achievement_id: string;
  created_at: string;
  used: boolean;
  n: string;
  day: string;
  sats: number;
  usd_micros: string;
  state: LedgerState;
};

/** A merge that found a credit moved since it read it: rolled back, to be decided again. */
const MOVED_MEANWHILE = Symbol('moved meanwhile');
const MERGE_ATTEMPTS = 5;

/**
 * Guests on PostgreSQL: a guest's credits merged into the player who linked, in one transaction
 * under both players' locks (the ones claims and withdrawals take, in a fixed order), through the
 * write primitive: each credit moved (to the player, credited or still held) or dropped (rejected) by the
 * player's repeat rules and cap (core/claim-decision.ts), audited and told.
 */
export function pgGuests(pool: Pool) {
  /**
   * An operator's approval or denial of a guest's held credit takes no player lock: committed
   * between the merge's read and its write, it moved a credit the merge decided on. The merge is
   * then rolled back and decided again on what is there now (a write from the state it read would
   * have undone the approval: credited back to held).
   */
  async function mergeGuest(guestId: string, userId: string, rules: MergeRules, audit: AuditNote, now: number): Promise<GuestMerge> {
    for (let attempt = 1; ; attempt++) {
      const r = await mergeOnce(guestId, userId, rules, audit, now);
      if (r !== MOVED_MEANWHILE) return r;
      if (attempt >= MERGE_ATTEMPTS) throw new Error(`merge of ${guestId}: its credits kept moving under it (${MERGE_ATTEMPTS} attempts)`);
    }
  }

  async function mergeOnce(guestId: string, userId: string, { repeats, limits, prizes }: MergeRules, audit: AuditNote, now: number): Promise<GuestMerge | typeof MOVED_MEANWHILE> {
    const locks = [guestId, userId]
      .sort()
      .map((u) => `SELECT pg_advisory_xact_lock(hashtextextended(${escapeLiteral(`u:${u}`)}, 0))`)
      .join('; ');
    return inTransaction<GuestMerge | typeof MOVED_MEANWHILE>(
      pool,
      async (c) => {
        // In one round trip: the guest marked merged (none of the rest when it already was), the
        // guest's credits, each with whether the player already used its key (the facts the
        // decision needs and no more: the whole rows come back from the primitive), the player's
        // own reserving claims of those achievements, and, with a player cap, what the player
        // reserved on those credits' days. One statement, one snapshot, taken under both players'
        // locks as the statements' were.
        const facts = (
          await c.query<Fact>(
            `WITH m AS (INSERT INTO merged_guests (guest_id, user_id, at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1),
             again AS (SELECT 1 FROM merged_guests x WHERE x.guest_id = $1 AND x.user_id = $2),
             g AS (
               SELECT g.id, g.achievement_id, g.created_at, g.day, g.sats, rewardbus_usd_micros(g.terms) AS usd_micros, g.state,
                 row_number() OVER (ORDER BY g.created_at, g.seq) AS n,
                 EXISTS (SELECT 1 FROM rewards p WHERE p.user_id = $2 AND p.idempotency_key = g.idempotency_key) AS used
               FROM rewards g WHERE (EXISTS (SELECT 1 FROM m) OR EXISTS (SELECT 1 FROM again)) AND g.user_id = $1 AND g.kind = 'credit' AND g.${MERGED_SQL})
             SELECT 'merged' AS what, NULL AS id, NULL AS achievement_id, NULL::bigint AS created_at, NULL::boolean AS used, NULL::bigint AS n,
               NULL::text AS day, NULL::bigint AS sats, NULL::bigint AS usd_micros, NULL::text AS state FROM m
             UNION ALL SELECT 'again', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM again
             UNION ALL SELECT 'credit', g.id, g.achievement_id, g.created_at, g.used, g.n, g.day, g.sats, g.usd_micros, g.state FROM g
             UNION ALL SELECT 'theirs', NULL, r.achievement_id, r.created_at, NULL, NULL, NULL, NULL, NULL, NULL FROM rewards r
               WHERE r.user_id = $2 AND r.achievement_id IN (SELECT g.achievement_id FROM g) AND r.kind <> 'withdrawal' AND r.${RESERVING_SQL}
             UNION ALL SELECT 'day', NULL, NULL, NULL, NULL, NULL, r.day, sum(r.sats)::bigint, sum(rewardbus_usd_micros(r.terms))::bigint, NULL FROM rewards r
               WHERE $4 AND r.user_id = $2 AND r.day IN (SELECT g.day FROM g) AND r.kind <> 'withdrawal' AND r.${RESERVING_SQL} GROUP BY r.day`,
            [guestId, userId, now, mergeReadsDays(limits)],
          )
        ).rows;
        // Merged before into this player: what the guest still holds moves (a claim committed after the link).
        const fresh = facts.some((f) => f.what === 'merged');
        if (!fresh && !facts.some((f) => f.what === 'again')) return { rollback: { merged: false, moved: [], dropped: [] } };
        const times = new Map<string, number[]>();
        const days = new Map<string, { userSats: number; userUsdMicros: number }>();
        for (const f of facts) {
          if (f.what === 'theirs') {
            const mine = times.get(f.achievement_id);
            if (mine) mine.push(Number(f.created_at));
            else times.set(f.achievement_id, [Number(f.created_at)]);
          }
          if (f.what === 'day') days.set(f.day, { userSats: Number(f.sats), userUsdMicros: Number(f.usd_micros) });
        }
        const decide = mergeDecider(
          repeats,
          limits,
          {
            times: (achievementId) => times.get(achievementId) ?? [],
            day: (day) => days.get(day) ?? { userSats: 0, userUsdMicros: 0 },
          },
          prizes,
        );
        // The credits in the order they were earned (the order the decision takes them in).
        const credits = facts.filter((f): f is Credit => f.what === 'credit').sort((a, b) => Number(a.n) - Number(b.n));
        const changes: UpdateChange[] = credits.map((row) => {
          const reason = decide({
            achievementId: row.achievement_id,
            at: Number(row.created_at),
            day: row.day,
            sats: Number(row.sats),
            usdMicros: Number(row.usd_micros),
            used: row.used,
          });
          return {
            op: 'update',
            id: row.id,
            // A dropped credit stays the guest's, rejected: the player's own record is untouched.
            ...(reason ? {} : { user: userId }),
            // From the state the merge read (one of the lifecycle's `merge.from`), and no other.
            from: LIFECYCLE.merge.from.filter((s) => s === row.state),
            unsent: false,
            // A moved credit keeps its state: a held one waits for the operator as the player's.
            state: reason ? 'rejected' : row.state,
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
        if (applied.length < changes.length) return { rollback: MOVED_MEANWHILE };
        const out: GuestMerge = { merged: fresh, moved: [], dropped: [] };
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
