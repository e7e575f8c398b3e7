import type { Pool } from 'pg';
import { utcDay } from '../../../wire/earning-rules.js';
import { PRUNE_CHUNK } from '../../core/ports/ledger.js';
import type { ReferralStore } from '../../core/ports/referral-store.js';
import { referrerCapped } from '../../core/referral-decision.js';
import { FIRST_PAGE, REFEREE_EARNED, type ReferralRow, referralOf } from '../referral-row.js';
import { pruneInChunks } from './prune.js';
import { inTransaction } from './transaction.js';

/**
 * The referral programs' tables on PostgreSQL (shared by every relay): a qualification counts the
 * referrer's day under the referrer's own advisory lock (not the player lock claims take, so a
 * referral never waits on a claim), and only a pending referral moves: two relays qualifying the
 * same referral get the same answer, and one of them `fresh`.
 */
export function pgReferrals(pool: Pool): ReferralStore {
  const rows = async (sql: string, params: unknown[]) => (await pool.query<ReferralRow<boolean>>(sql, params)).rows.map(referralOf);
  return {
    async code(userId, fresh) {
      const r = await pool.query<{ code: string }>(
        `WITH ins AS (INSERT INTO referral_codes (user_id, code) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING RETURNING code)
         SELECT code FROM ins UNION ALL SELECT code FROM referral_codes WHERE user_id = $1 LIMIT 1`,
        [userId, fresh],
      );
      return r.rows[0]!.code;
    },
    async ownerOf(code) {
      return (await pool.query<{ user_id: string }>('SELECT user_id FROM referral_codes WHERE code = $1', [code])).rows[0]?.user_id;
    },
    async firstLink(userId, at) {
      const r = await pool.query<{ at: string; first: boolean }>(
        `WITH ins AS (INSERT INTO first_links (user_id, at) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING RETURNING at)
         SELECT at, true AS first FROM ins UNION ALL SELECT at, false FROM first_links WHERE user_id = $1 LIMIT 1`,
        [userId, at],
      );
      return { first: r.rows[0]!.first, at: Number(r.rows[0]!.at) };
    },
    async seen(userId, address, at) {
      await pool.query(
        `INSERT INTO player_addresses (user_id, address, at) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, address) DO UPDATE SET at = greatest(player_addresses.at, excluded.at)`,
        [userId, address, at],
      );
    },
    async seenSince(userId, address, since) {
      return (await pool.query('SELECT 1 FROM player_addresses WHERE user_id = $1 AND address = $2 AND at >= $3', [userId, address, since])).rowCount === 1;
    },
    // The time is checked again on the row deleted: one seen again (another relay's seen()) while
    // the delete waited for it is PostgreSQL's latest version, no longer to forget.
    forget: (seenBefore) =>
      pruneInChunks(
        pool,
        `DELETE FROM player_addresses WHERE at < $1 AND (user_id, address) IN (SELECT user_id, address FROM player_addresses WHERE at < $1 LIMIT ${PRUNE_CHUNK})`,
        seenBefore,
      ),
    async refer(referrals) {
      if (!referrals.length) return;
      await pool.query(
        `INSERT INTO referrals (program_id, referee_id, referrer_id, state, reason, linked_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[]) ON CONFLICT DO NOTHING`,
        [
          referrals.map((r) => r.programId),
          referrals.map((r) => r.refereeId),
          referrals.map((r) => r.referrerId ?? null),
          referrals.map((r) => r.state),
          referrals.map((r) => r.reason ?? null),
          referrals.map((r) => r.linkedAt),
        ],
      );
    },
    pending: (refereeId) => rows(`SELECT * FROM referrals WHERE referee_id = $1 AND state = 'pending'`, [refereeId]),
    qualify: (programId, refereeId, at, perReferrerDaily) =>
      inTransaction(pool, async (c) => {
        const who = await c.query<{ referrer_id: string | null }>('SELECT referrer_id FROM referrals WHERE program_id = $1 AND referee_id = $2', [programId, refereeId]);
        const referrerId = who.rows[0]?.referrer_id;
        if (!referrerId) return undefined;
        await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`referrer:${programId}:${referrerId}`]);
        const r = (await c.query<ReferralRow<boolean>>('SELECT * FROM referrals WHERE program_id = $1 AND referee_id = $2 FOR UPDATE', [programId, refereeId])).rows[0];
        if (!r) return undefined;
        if (r.state === 'qualified') return { referrerId, referrerCapped: r.referrer_capped, fresh: false };
        if (r.state !== 'pending') return undefined;
        const day = utcDay(at);
        const before = await c.query<{ n: string }>(
          `SELECT count(*) AS n FROM referrals WHERE program_id = $1 AND referrer_id = $2 AND state = 'qualified' AND qualified_day = $3`,
          [programId, referrerId, day],
        );
        const capped = referrerCapped(Number(before.rows[0]!.n), perReferrerDaily);
        await c.query(`UPDATE referrals SET state = 'qualified', qualified_at = $1, qualified_day = $2, referrer_capped = $3 WHERE program_id = $4 AND referee_id = $5`, [
          at,
          day,
          capped,
          programId,
          refereeId,
        ]);
        return { referrerId, referrerCapped: capped, fresh: true };
      }),
    async rewarded(programId, refereeId) {
      await pool.query('UPDATE referrals SET rewarded = true WHERE program_id = $1 AND referee_id = $2', [programId, refereeId]);
    },
    // Those owed their rewards first: newer pending ones past the limit must not starve them.
    unfinished: (since, limit, after = FIRST_PAGE) =>
      rows(
        `SELECT * FROM referrals f
         WHERE ((f.state = 'qualified' AND NOT f.rewarded) OR (f.state = 'pending' AND f.linked_at >= $1 AND ${REFEREE_EARNED}))
           AND (f.linked_at, f.program_id, f.referee_id) < ($2, $3, $4)
         ORDER BY f.linked_at DESC, f.program_id DESC, f.referee_id DESC LIMIT $5`,
        [since, after.linkedAt, after.programId, after.refereeId, limit],
      ),
    recent: (limit) => rows('SELECT * FROM referrals ORDER BY linked_at DESC LIMIT $1', [limit]),
  };
}
