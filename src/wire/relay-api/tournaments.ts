// A tournament's results, posted by the game's server, and the prizes they paid.
import type { RewardRecord } from './rewards.js';

/** `POST /v1/server/tournaments/{id}/results` body: the period's ranking, best first, each a userId or a gamertag. */
export interface TournamentResults {
  period: string;
  ranking: string[];
}

/** Its answer (201 first, 200 for the same results again): the prize records in ranking order (`place`, `period` on each). */
export interface TournamentPosted {
  tournamentId: string;
  period: string;
  rewards: RewardRecord[];
}
