import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { clientIp, rateLimited, type RelayEnv } from '../context.js';
import { RelayProblem } from '../problems.js';
import type { RateLimiter } from './rate-limit.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The operator's surface: `Authorization: Bearer <RELAY_ADMIN_TOKEN>`, compared in constant time
 * (as digests, so the length leaks nothing either), rate limited per address.
 */
export function requireAdmin(token: string, limiter: RateLimiter): MiddlewareHandler<RelayEnv> {
  const expected = digest(token);
  return async function requireAdmin(c, next) {
    rateLimited(limiter, `admin:${clientIp(c)}`);
    const auth = c.req.header('authorization') ?? '';
    const given = auth.startsWith('Bearer ') ? auth.slice(7).trim() : '';
    if (!given || !timingSafeEqual(digest(given), expected)) throw new RelayProblem('unauthorized', 'The operator token (RELAY_ADMIN_TOKEN) is required');
    await next();
  };
}
