import { utcDay } from '../../../wire/earning-rules.js';
import { claimedState } from '../../core/claim-decision.js';
import type { PlayerEvent } from '../../core/ports/event-log.js';
import type { ClaimLimits, TournamentLedger, TournamentPost, TournamentPostResult } from '../../core/ports/ledger.js';
import { gamertagKey, poolRefusal, resultsDecision } from '../../core/tournament-decision.js';
import { type LedgerRow, toLedgerEntry } from '../ledger-row.js';
import type { SqliteDb } from './db.js';
import { type RawRow, ROW_COLUMNS, rowOf } from './reward-rows.js';

/** What the ledger lends its tournaments: its one write primitive, and the day's reservations. */
export interface SqliteLedgerParts {
  commit(before: LedgerRow | undefined, after: LedgerRow, at: number): PlayerEvent | undefined;
  reservedSats(scope: string, day: string): number;
}

/**
 * Tournaments on SQLite (issue 37): a period's results in one write (better-sqlite3 runs it
 * alone, in the group commit's transaction): the post, and every prize through the ledger's one
 * write primitive, decided by core/tournament-decision.ts as PostgreSQL decides them.
 */
export function sqliteTournaments({ db, write }: SqliteDb, { commit, reservedSats }: SqliteLedgerParts): Required<TournamentLedger> {
  const q = {
    posted: db.prepare<[string, string], string>('SELECT ranking_hash FROM tournament_results WHERE tournament_id = ? AND period = ?').pluck(),
    record: db.prepare<[string, string, string, number, number, string]>(
      'INSERT INTO tournament_results (tournament_id, period, ranking_hash, places, at, by) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    byKey: db.prepare<[string, string], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE user_id = ? AND idempotency_key = ?`).raw(),
    remember: db.prepare<[string, string, number]>(
      'INSERT INTO linked_players (user_id, gamertag, linked_at) VALUES (?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET gamertag = excluded.gamertag, linked_at = excluded.linked_at',
    ),
    // A name is a userId, or else a guest's id merged into its player, or else the gamertag a player
    // last linked with, in any case (gamertagKey; or as written, for a player filed before); the
    // latest link wins a name two players held.
    known: db
      .prepare<[string, string, string, string], string>(
        `SELECT user_id FROM (SELECT user_id, 0 AS o, 0 AS t FROM linked_players WHERE user_id = ?
           UNION ALL SELECT user_id, 1, 0 FROM merged_guests WHERE guest_id = ?
           UNION ALL SELECT user_id, 2, -linked_at FROM linked_players WHERE gamertag IN (?, ?)) ORDER BY o, t LIMIT 1`,
      )
      .pluck(),
  };

  function postNow(post: TournamentPost, limits: ClaimLimits, now: number): TournamentPostResult {
    const decided = resultsDecision(q.posted.get(post.tournamentId, post.period), post.rankingHash);
    if (decided === 'other_results') return { kind: 'other_results' };
    // The prizes recorded: a catalog that lists more places now (a deploy since) has no record for those.
    if (decided === 'existing')
      return {
        kind: 'existing',
        entries: post.prizes.flatMap((p) => {
          const row = q.byKey.get(p.userId, p.idempotencyKey);
          return row ? [toLedgerEntry(rowOf(row))] : [];
        }),
      };
    const day = utcDay(now);
    const refused = poolRefusal(post.prizes, reservedSats('*', day), limits, reservedSats('$*', day));
    if (refused) return { kind: 'refused', reason: refused };
    q.record.run(post.tournamentId, post.period, post.rankingHash, post.prizes.length, now, post.by);
    const prizes = post.prizes.map((p) => {
      const row: LedgerRow = {
        id: p.id,
        user_id: p.userId,
        idempotency_key: p.idempotencyKey,
        request_hash: p.requestHash,
        achievement_id: p.achievementId,
        sats: p.sats,
        state: claimedState(undefined, p),
        phase: 'claimed',
        reason: null,
        payment_id: null,
        gamertag: null,
        occurred_at: null,
        address: null,
        day,
        created_at: now,
        settled_at: null,
        kind: p.credit ? 'credit' : 'payout',
        terms: p.terms ?? null,
      };
      const event = commit(undefined, row, now);
      return { entry: toLedgerEntry(row), ...(event ? { event } : {}) };
    });
    return { kind: 'created', prizes };
  }

  return {
    postTournament: (post, limits, now) => write(() => postNow(post, limits, now)),
    rememberPlayer: (userId, gamertag, now) => write(() => void q.remember.run(userId, gamertagKey(gamertag), now)),
    knownPlayers: async (names) =>
      names.flatMap((n): Array<[string, string]> => {
        const userId = q.known.get(n, n, n, gamertagKey(n));
        return userId === undefined ? [] : [[n, userId]];
      }),
  };
}
