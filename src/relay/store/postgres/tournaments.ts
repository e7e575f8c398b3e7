import type { Pool } from 'pg';
import { utcDay } from '../../../wire/earning-rules.js';
import { claimedState } from '../../core/claim-decision.js';
import type { ClaimLimits, LedgerEntry, TournamentLedger, TournamentPost, TournamentPostResult } from '../../core/ports/ledger.js';
import { gamertagKey, poolRefusal, resultsDecision } from '../../core/tournament-decision.js';
import { toLedgerEntry } from '../ledger-row.js';
import { APPLY_SQL, type AppliedRow, applyParams, type InsertChange } from './apply.js';
import { eventOf, RESERVING, type Row } from './rows.js';
import { inTransaction } from './transaction.js';

/**
 * Tournaments on PostgreSQL (issue 37), shared by any number of relays. A period's results in one
 * transaction: the period's own lock (two posts of it take turns: the second finds the first's
 * row), the ranking's players' locks in a stable order (rewardbus_lock_players: claims of theirs
 * wait, and see the prizes on their caps), then the day's budget row, as every claim takes them;
 * decided by core/tournament-decision.ts as SQLite decides; the post's row, and every prize
 * through rewardbus_apply (in batches of APPLY_CHUNK, in that transaction).
 */
/**
 * Prizes per call of rewardbus_apply, every call in the one transaction. The primitive finds a
 * batch's rows and events by joins (its cost grows with the batch, not its square), so a whole
 * post of up to 1,000 places is one call; larger ones go in several, all or nothing alike.
 */
const APPLY_CHUNK = 1_000;

export function pgTournaments(pool: Pool, { owner, leaseMs }: { owner: string; leaseMs: number }): Required<TournamentLedger> {
  const entriesOf = async (post: TournamentPost, rows: Row[]): Promise<LedgerEntry[]> => {
    const byKey = new Map(rows.map((r) => [`${r.user_id}\n${r.idempotency_key}`, r]));
    // The prizes recorded: a catalog that lists more places now (a deploy since) has no record for those.
    return post.prizes.flatMap((p) => {
      const row = byKey.get(`${p.userId}\n${p.idempotencyKey}`);
      return row ? [toLedgerEntry(row)] : [];
    });
  };

  async function postTournament(post: TournamentPost, limits: ClaimLimits, now: number): Promise<TournamentPostResult> {
    const day = utcDay(now);
    // A budget in sats or in dollars: the day's budget row keeps both (usd_micros beside sats).
    const budgeted = limits.dailyBudgetSats > 0 || (limits.dailyBudgetUsd ?? 0) > 0;
    return inTransaction<TournamentPostResult>(pool, async (c) => {
      await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`t:${post.tournamentId}\n${post.period}`]);
      const posted = await c.query<{ ranking_hash: string }>('SELECT ranking_hash FROM tournament_results WHERE tournament_id = $1 AND period = $2', [
        post.tournamentId,
        post.period,
      ]);
      const decided = resultsDecision(posted.rows[0]?.ranking_hash, post.rankingHash);
      if (decided === 'other_results') return { rollback: { kind: 'other_results' } };
      if (decided === 'existing') {
        const rows = await c.query<Row>('SELECT r.* FROM rewards r JOIN unnest($1::text[], $2::text[]) AS k(u, k) ON r.user_id = k.u AND r.idempotency_key = k.k', [
          post.prizes.map((p) => p.userId),
          post.prizes.map((p) => p.idempotencyKey),
        ]);
        return { rollback: { kind: 'existing', entries: await entriesOf(post, rows.rows) } };
      }
      await c.query('SELECT rewardbus_lock_players($1::text[])', [post.prizes.map((p) => p.userId)]);
      // The day's budget row, made if need be and locked (as a claim's facts take it): the pool is checked against it.
      const budget = budgeted
        ? await c.query<{ sats: string; usd_micros: string }>(
            'INSERT INTO budget AS bu (day, sats) VALUES ($1, 0) ON CONFLICT (day) DO UPDATE SET sats = bu.sats RETURNING bu.sats, bu.usd_micros',
            [day],
          )
        : undefined;
      const refused = poolRefusal(post.prizes, Number(budget?.rows[0]?.sats ?? 0), limits, Number(budget?.rows[0]?.usd_micros ?? 0));
      if (refused) return { rollback: { kind: 'refused', reason: refused } };
      await c.query('INSERT INTO tournament_results (tournament_id, period, ranking_hash, places, at, by) VALUES ($1, $2, $3, $4, $5, $6)', [
        post.tournamentId,
        post.period,
        post.rankingHash,
        post.prizes.length,
        now,
        post.by,
      ]);
      if (!post.prizes.length) return { kind: 'created', prizes: [] };
      const changes = post.prizes.map((p): InsertChange => {
        const state = claimedState(undefined, p);
        const sending = state === 'sending';
        return {
          op: 'insert',
          kind: p.credit ? 'credit' : 'payout',
          id: p.id,
          user: p.userId,
          key: p.idempotencyKey,
          hash: p.requestHash,
          achievement: p.achievementId,
          occurred: null,
          state,
          reason: null,
          sats: p.sats,
          day,
          created: now,
          owner: sending ? owner : null,
          lease: sending ? now + leaseMs : null,
          budgeted: budgeted && RESERVING.includes(state),
          address: null,
          gamertag: null,
          at: now,
          terms: p.terms ?? null,
        };
      });
      const applied: AppliedRow[] = [];
      for (let at = 0; at < changes.length; at += APPLY_CHUNK) {
        const rows = (await c.query<AppliedRow>(APPLY_SQL, applyParams(changes.slice(at, at + APPLY_CHUNK), true))).rows;
        for (const r of rows) applied.push({ ...r, i: r.i + at });
      }
      const byItem = new Map(applied.map((r) => [r.i, r]));
      return {
        kind: 'created',
        prizes: changes.map((_, i) => {
          const r = byItem.get(i)!;
          return { entry: toLedgerEntry(r.entry!), ...(r.event ? { event: eventOf(r.event) } : {}) };
        }),
      };
    });
  }

  return {
    postTournament,
    rememberPlayer: async (userId, gamertag, now) => {
      await pool.query(
        'INSERT INTO linked_players (user_id, gamertag, linked_at) VALUES ($1, $2, $3) ON CONFLICT (user_id) DO UPDATE SET gamertag = excluded.gamertag, linked_at = excluded.linked_at',
        [userId, gamertagKey(gamertag), now],
      );
    },
    // A name is a userId, or else a guest's id merged into its player, or else the gamertag a player
    // last linked with, in any case (gamertagKey; or as written, for a player filed before); the
    // latest link wins a name two players held.
    knownPlayers: async (names) => {
      const { rows } = await pool.query<{ name: string; user_id: string }>(
        `SELECT n.name, coalesce(
           (SELECT p.user_id FROM linked_players p WHERE p.user_id = n.name),
           (SELECT m.user_id FROM merged_guests m WHERE m.guest_id = n.name),
           (SELECT p.user_id FROM linked_players p WHERE p.gamertag IN (n.name, n.key) ORDER BY p.linked_at DESC LIMIT 1)) AS user_id
         FROM unnest($1::text[], $2::text[]) AS n(name, key)`,
        [names, names.map(gamertagKey)],
      );
      return rows.flatMap((r): Array<[string, string]> => (r.user_id === null ? [] : [[r.name, r.user_id]]));
    },
  };
}
