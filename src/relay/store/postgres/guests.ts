import { escapeLiteral, type Pool } from 'pg';
import { mergeRefusal } from '../../core/claim-decision.js';
import { LIFECYCLE } from '../../core/lifecycle.js';
import type { AuditNote, GuestMerge } from '../../core/ports/ledger.js';
import type { Repeat } from '../../core/streak.js';
import { RESERVING_SQL } from '../ledger-row.js';
import { APPLY_SQL, type AppliedRow, applyParams, settledOf, type UpdateChange } from './apply.js';
import { BEGIN, inTransaction } from './transaction.js';

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
        const merged = await c.query('INSERT INTO merged_guests (guest_id, user_id, at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [guestId, userId, now]);
        if (merged.rowCount !== 1) return { rollback: { merged: false, moved: [], dropped: [] } };
        // The guest's credits, each with whether the player already used its key: the facts the
        // decision needs and no more (the whole rows come back from the primitive).
        const credits = (
          await c.query<{ id: string; achievement_id: string; created_at: string; used: boolean }>(
            `SELECT g.id, g.achievement_id, g.created_at, EXISTS (SELECT 1 FROM rewards p WHERE p.user_id = $2 AND p.idempotency_key = g.idempotency_key) AS used
             FROM rewards g WHERE g.user_id = $1 AND g.kind = 'credit' AND g.state = 'credited' ORDER BY g.created_at, g.id`,
            [guestId, userId],
          )
        ).rows;
        const achievements = [...new Set(credits.map((r) => r.achievement_id))];
        // The player's own reserving claims of those achievements.
        const theirs = (
          await c.query<{ achievement_id: string; created_at: string }>(
            `SELECT achievement_id, created_at FROM rewards WHERE user_id = $1 AND achievement_id = ANY($2) AND kind <> 'withdrawal' AND ${RESERVING_SQL}`,
            [userId, achievements],
          )
        ).rows;
        const times = new Map<string, number[]>();
        for (const t of theirs) times.set(t.achievement_id, [...(times.get(t.achievement_id) ?? []), Number(t.created_at)]);
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
