// Tournaments (issue 37): the ledger's part, and what it takes and gives.
import type { ClaimLimits, NewClaim } from './claim.js';
import type { PlayerEvent } from './event-log.js';
import type { LedgerEntry } from './ledger-entry.js';

/** A tournament's results as the relay asks the ledger to record them (core/tournaments.ts), decided in one transaction. */
export interface TournamentPost {
  tournamentId: string;
  period: string;
  /** The ranking as userIds, hashed: the same results posted again are a replay, other ones a conflict. */
  rankingHash: string;
  /** Who posted it: the game's server, or the operator at the command line. */
  by: string;
  /** One claim per place that wins a prize, in ranking order (its place and period in `terms`, its key deterministic). */
  prizes: NewClaim[];
}

/**
 * `created`: recorded now, every prize with its player's event (in ranking order). `existing`: the
 * same results were posted before: their prizes as they are now. `other_results`: others were.
 * `refused`: the pool does not fit the day's budget; nothing was written.
 */
export type TournamentPostResult =
  | { kind: 'created'; prizes: Array<{ entry: LedgerEntry; event?: PlayerEvent }> }
  | { kind: 'existing'; entries: LedgerEntry[] }
  | { kind: 'other_results' }
  | { kind: 'refused'; reason: 'daily_budget' };

/**
 * Tournaments (issue 37): the ledger's part, on both stores. Optional, so a ledger of one's own
 * (without tournaments) still compiles; the relay answers the route only with it.
 */
export interface TournamentLedger {
  /**
   * Records a period's results in one transaction: the post (tournament, period, ranking hash, at,
   * by) and every prize through the store's one write primitive (one batch), the pool reserved
   * from the day's budget (core/tournament-decision.ts decides, on both stores).
   */
  postTournament?(post: TournamentPost, limits: ClaimLimits, now: number): Promise<TournamentPostResult>;
  /** A player linked with this relay (by this gamertag): a ranking may name them from now on. */
  rememberPlayer?(userId: string, gamertag: string, now: number): Promise<void>;
  /**
   * The players these names are (a userId, a guest's id merged into its player, or the gamertag a
   * player last linked with), as [name, userId]; a name not known is left out.
   */
  knownPlayers?(names: readonly string[]): Promise<Array<[string, string]>>;
}
