import { Hono } from 'hono';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { PlayerSession } from '../../../wire/relay-api.js';
import { clientIp, rateLimited, readJson, type RelayEnv } from '../context.js';
import type { PaymentsClient } from '../../payments/client.js';
import type { PlayerTokens } from '../../core/player-tokens.js';
import { RelayProblem } from '../problems.js';
import { addressGroup } from '../client-address.js';
import { nextUtcDay, utcDay } from '../../../wire/earning-rules.js';
import type { Ledger } from '../../store/ledger.js';
import type { RateLimiter } from '../middleware/rate-limit.js';

const linkSchema = z.strictObject({
  gamertag: z.string().trim().min(1).max(64).regex(/^[^/\\?#%\s]+$/, 'a gamertag has no spaces, slashes, ?, # or %'),
  humanCheck: z.string().min(1).max(2048).optional(),
});

/**
 * A human check at link (a captcha's server-side verification, docs/threat-model.md): true to
 * issue the token, false to refuse it (403 `link_refused`). Called once the gamertag is known.
 */
export type VerifyLink = (request: Request, link: { gamertag: string; userId: string; humanCheck?: string }) => boolean | Promise<boolean>;

export interface PlayersRouteOptions {
  verifyLink?: VerifyLink | undefined;
  /** RELAY_LINKS_PER_ADDRESS_PER_DAY: different players one address may link per UTC day. 0: no cap. */
  linksPerAddressPerDay?: number;
  /** Where a link the service could not answer is said (`link_failed`, at warn). */
  logger?: Pick<Logger, 'warn'>;
}

/** `POST /v1/players`: resolves a gamertag to its permanent userId and hands out a player token. */
export function playersRoute(payments: PaymentsClient, tokens: PlayerTokens, limiter: RateLimiter, ledger: Pick<Ledger, 'linkAddress'>, options: PlayersRouteOptions = {}) {
  const { verifyLink, linksPerAddressPerDay = 0 } = options;
  return new Hono<RelayEnv>().post('/', async (c) => {
    rateLimited(limiter, `ip:${clientIp(c)}`);
    const { gamertag, humanCheck } = await readJson(c, linkSchema);
    const r = await payments.userIdByGamertag(gamertag);
    if (r.kind === 'refused' && (r.status === 400 || r.status === 404)) throw new RelayProblem('unknown_gamertag', `No player is called ${gamertag}`);
    if (r.kind !== 'ok') {
      const reason = r.kind === 'refused' ? `refused_${r.status}` : r.reason;
      options.logger?.warn({ event: 'link_failed', reason }, `a player could not link: the payments service did not resolve the gamertag (${reason})`);
      throw new RelayProblem('service_unavailable', undefined, { 'Retry-After': '5' });
    }
    if (verifyLink && !(await verifyLink(c.req.raw, { gamertag, userId: r.data.id, ...(humanCheck ? { humanCheck } : {}) }))) throw new RelayProblem('link_refused');
    if (linksPerAddressPerDay > 0) {
      // Linking the same player again is free; another player past the cap waits for the next UTC day.
      const now = Date.now();
      if (!(await ledger.linkAddress(addressGroup(clientIp(c)), utcDay(now), r.data.id, linksPerAddressPerDay))) {
        throw new RelayProblem('too_many_players', `This address may link ${linksPerAddressPerDay} players a day`, { 'Retry-After': `${Math.ceil((nextUtcDay(now) - now) / 1000)}` });
      }
    }
    const { token, claims } = tokens.issue(r.data.id, gamertag);
    // A bearer token: no cache, shared or private, may keep it.
    c.header('Cache-Control', 'no-store');
    return c.json({ userId: claims.userId, gamertag, token, expiresAt: new Date(claims.exp).toISOString() } satisfies PlayerSession, 201);
  });
}
