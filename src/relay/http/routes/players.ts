import { Hono } from 'hono';
import { z } from 'zod';
import type { PlayerSession } from '../../../wire/relay-api.js';
import { clientIp, rateLimited, readJson, type RelayEnv } from '../context.js';
import type { PaymentsClient } from '../../payments/client.js';
import type { PlayerTokens } from '../../core/player-tokens.js';
import { RelayProblem } from '../problems.js';
import type { RateLimiter } from '../middleware/rate-limit.js';

const linkSchema = z.strictObject({
  gamertag: z.string().trim().min(1).max(64).regex(/^[^/\\?#%\s]+$/, 'a gamertag has no spaces, slashes, ?, # or %'),
});

/** `POST /v1/players`: resolves a gamertag to its permanent userId and hands out a player token. */
export function playersRoute(payments: PaymentsClient, tokens: PlayerTokens, limiter: RateLimiter) {
  return new Hono<RelayEnv>().post('/', async (c) => {
    rateLimited(limiter, `ip:${clientIp(c)}`);
    const { gamertag } = await readJson(c, linkSchema);
    const r = await payments.userIdByGamertag(gamertag);
    if (r.kind === 'refused' && (r.status === 400 || r.status === 404)) throw new RelayProblem('unknown_gamertag', `No player is called ${gamertag}`);
    if (r.kind !== 'ok') throw new RelayProblem('service_unavailable', undefined, { 'Retry-After': '5' });
    const { token, claims } = tokens.issue(r.data.id, gamertag);
    // A bearer token: no cache, shared or private, may keep it.
    c.header('Cache-Control', 'no-store');
    return c.json({ userId: claims.userId, gamertag, token, expiresAt: new Date(claims.exp).toISOString() } satisfies PlayerSession, 201);
  });
}
