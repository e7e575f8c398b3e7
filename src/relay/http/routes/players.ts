import { Hono } from 'hono';
import { z } from 'zod';
import type { Players } from '../../core/players.js';
import { addressScope, clientKey, type RelayEnv, rateLimited, readJsonText } from '../context.js';
import type { RateLimiter } from '../middleware/rate-limit.js';

export type { VerifyLink } from '../../core/players.js';

const linkSchema = z.strictObject({
  gamertag: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .regex(/^[^/\\?#%\s]+$/, 'a gamertag has no spaces, slashes, ?, # or %')
    .optional(),
  humanCheck: z.string().min(1).max(2048).optional(),
  // Balance mode: linking with a guest's token merges the guest's credits.
  guestToken: z.string().min(1).max(2048).optional(),
  // Another player's code (GET /v1/referral-code): any short string; one nobody has is answered `unknown_code`.
  referralCode: z.string().min(1).max(64).optional(),
});

/**
 * `POST /v1/players`: resolves a gamertag to its permanent userId and hands out a player token
 * (the link use case, core/players.ts). The rate limit comes first, before the body is read.
 */
export function playersRoute(link: Players['link'], limiter: RateLimiter) {
  return new Hono<RelayEnv>().post('/', async (c) => {
    rateLimited(limiter, addressScope(c, 'ip'));
    const { data, text } = await readJsonText(c, linkSchema);
    const raw = c.req.raw;
    const session = await link(
      {
        ...(data.gamertag !== undefined ? { gamertag: data.gamertag } : {}),
        ...(data.humanCheck ? { humanCheck: data.humanCheck } : {}),
        ...(data.guestToken ? { guestToken: data.guestToken } : {}),
        ...(data.referralCode ? { referralCode: data.referralCode } : {}),
      },
      {
        address: clientKey(c),
        now: Date.now(),
        // The request's own body is read by now: the hook gets a copy it can read again.
        request: () => new Request(raw.url, { method: raw.method, headers: raw.headers, body: text }),
      },
    );
    // A bearer token: no cache, shared or private, may keep it.
    c.header('Cache-Control', 'no-store');
    return c.json(session, 201);
  });
}
