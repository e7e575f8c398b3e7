import { Hono } from 'hono';
import { z } from 'zod';
import type { TournamentPosted } from '../../../wire/relay-api.js';
import { toRewardRecord } from '../../core/reward-record.js';
import type { PostResults } from '../../core/tournaments.js';
import { type RelayEnv, readJson } from '../context.js';

/** A ranking is larger than any player's request: up to 10,000 names. */
const MAX_RESULTS_BYTES = 1_048_576;

const resultsSchema = z.strictObject({
  period: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,31}$/, 'must be 1 to 32 letters, digits, dots, dashes, colons or underscores (e.g. 2026-W48)'),
  ranking: z
    .array(z.string().min(1, 'a name must not be empty').max(128, 'a name must be at most 128 characters'), { error: 'must be a list of userIds or gamertags, best first' })
    .min(1, 'must name at least one player')
    .max(10_000, 'must name at most 10000 players'),
});

/**
 * `POST /v1/server/tournaments/{id}/results`: the game's server posts a period's ranking; 201
 * with the prize records in ranking order, 200 with the same records for the same results again.
 * Behind RELAY_GAME_SERVER_SECRET (the bearer), never a player's token.
 */
export function tournamentsRoute(postResults: PostResults) {
  return new Hono<RelayEnv>().post('/:id/results', async (c) => {
    const body = await readJson(c, resultsSchema, MAX_RESULTS_BYTES);
    const tournamentId = c.req.param('id');
    const r = await postResults(tournamentId, body, 'game-server');
    return c.json({ tournamentId, period: body.period, rewards: r.entries.map(toRewardRecord) } satisfies TournamentPosted, r.created ? 201 : 200);
  });
}
