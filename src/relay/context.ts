import type { Context, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import type { PlayerClaims, PlayerTokens } from './player-tokens.js';
import { RelayProblem } from './problems.js';
import type { RateLimiter } from './rate-limit.js';

/** What the relay's handlers share: the authenticated player, and Node's socket when there is one. */
export type RelayEnv = {
  Variables: { player: PlayerClaims };
  Bindings: { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
};
export type RelayContext = Context<RelayEnv>;

/** The caller's address: the socket's under Node, 'local' for in-process `fetch` calls. */
export const clientIp = (c: RelayContext): string => c.env?.incoming?.socket?.remoteAddress ?? 'local';

/** Parses a JSON body against a schema: 415 for another content type, 400 for bad JSON or fields. */
export async function readJson<S extends z.ZodType>(c: RelayContext, schema: S): Promise<z.infer<S>> {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/([a-z.+-]*\+)?json\b/i.test(type)) throw new RelayProblem('unsupported_media_type');
  let json: unknown;
  try {
    json = JSON.parse(await c.req.text());
  } catch {
    throw new RelayProblem('bad_request', 'The body is not valid JSON');
  }
  const r = schema.safeParse(json);
  if (!r.success) {
    const detail = r.error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
    throw new RelayProblem('bad_request', detail);
  }
  return r.data;
}

export function rateLimited(limiter: RateLimiter, key: string): void {
  const wait = limiter(key);
  if (wait > 0) throw new RelayProblem('rate_limited', `Try again in ${wait} s`, { 'Retry-After': `${wait}` });
}

/** Requires `Authorization: Bearer <player token>` and rate-limits the player and the address. */
export function requirePlayer(tokens: PlayerTokens, limiter: RateLimiter): MiddlewareHandler<RelayEnv> {
  return async function requirePlayer(c, next) {
    rateLimited(limiter, `ip:${clientIp(c)}`);
    const auth = c.req.header('authorization') ?? '';
    const player = auth.startsWith('Bearer ') ? tokens.verify(auth.slice(7).trim()) : undefined;
    if (!player) throw new RelayProblem('unauthorized', 'Link the player again with POST /v1/players');
    rateLimited(limiter, `user:${player.userId}`);
    c.set('player', player);
    await next();
  };
}
