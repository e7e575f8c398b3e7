import { Hono } from 'hono';
import type { Logger } from 'pino';
import { z } from 'zod';
import { nextUtcDay, utcDay } from '../../../wire/earning-rules.js';
import type { PlayerSession } from '../../../wire/relay-api.js';
import type { Guests } from '../../core/guests.js';
import type { PlayerTokens } from '../../core/player-tokens.js';
import type { Ledger } from '../../core/ports/ledger.js';
import type { PaymentsClient } from '../../payments/client.js';
import { addressScope, clientKey, type RelayContext, type RelayEnv, rateLimited, readJsonText } from '../context.js';
import type { RateLimiter } from '../middleware/rate-limit.js';
import { RelayProblem } from '../problems.js';

const linkSchema = z.strictObject({
  gamertag: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .regex(/^[^/\\?#%\s]+$/, 'a gamertag has no spaces, slashes, ?, # or %')
    .optional(),
  humanCheck: z.string().min(1).max(2048).optional(),
  guestToken: z.string().min(1).max(2048).optional(),
});

/**
 * A human check at link (a captcha's server-side verification, docs/threat-model.md): true to
 * issue the token, false to refuse it (403 `link_refused`); a hook that throws (its verifier out
 * of reach) answers 503 `link_check_unavailable`. Called before the relay asks the payments
 * service who the gamertag is, so it knows the gamertag, not the userId. `request` is a copy of
 * the link request whose body can be read.
 */
export type VerifyLink = (request: Request, link: { gamertag: string; humanCheck?: string }) => boolean | Promise<boolean>;

export interface PlayersRouteOptions {
  verifyLink?: VerifyLink | undefined;
  /** RELAY_LINKS_PER_ADDRESS_PER_DAY: different players one address may link per UTC day. 0: no cap. */
  linksPerAddressPerDay?: number;
  /** Where a link the service could not answer (`link_failed`) or a hook that threw (`link_check_failed`) is said, at warn. */
  logger?: Pick<Logger, 'warn'>;
  /** Balance mode: `{}` makes a guest, and a link with a `guestToken` merges the guest's credits. */
  guests?: Guests | undefined;
}

/** Gamertags this relay remembers the userId of, at most; then it starts again. */
const MAX_REMEMBERED = 10_000;

/**
 * `POST /v1/players`: resolves a gamertag to its permanent userId and hands out a player token.
 *
 * Everything that can refuse a link comes before the call to the service (a refusal costs the
 * project no lookup): the rate limit, the address's links today, the human check. The lookup
 * then gives the userId, and the link is recorded, which decides two links racing past the cap.
 */
export function playersRoute(
  payments: PaymentsClient,
  tokens: PlayerTokens,
  limiter: RateLimiter,
  ledger: Pick<Ledger, 'linkAddress' | 'linkedPlayers'>,
  options: PlayersRouteOptions = {},
) {
  const { verifyLink, linksPerAddressPerDay: cap = 0, logger, guests } = options;
  // Whose gamertag is whose, as the service last said here: lets a capped address link again a
  // player it already linked today (free, as ever) before the lookup. A hint only: the lookup
  // still names the player, and linkAddress has the last word. A relay that never saw the
  // gamertag (restarted, or another one behind the balancer) refuses that relink until tomorrow.
  const userIds = new Map<string, string>();
  const remember = (gamertag: string, userId: string) => {
    if (userIds.size >= MAX_REMEMBERED) userIds.clear();
    userIds.set(gamertag, userId);
  };
  const tooMany = (now: number) =>
    new RelayProblem('too_many_players', `This address may link ${cap} players a day`, { 'Retry-After': `${Math.ceil((nextUtcDay(now) - now) / 1000)}` });

  /** A guest: counted against the address's links like a player, checked by the same human check. */
  async function guest(c: RelayContext, text: string, humanCheckToken: string | undefined) {
    if (!guests) throw new RelayProblem('bad_request', 'gamertag: a gamertag is required (guests play only in balance mode)');
    const now = Date.now();
    const address = cap > 0 ? clientKey(c) : undefined;
    if (address !== undefined && (await ledger.linkedPlayers(address, utcDay(now))).length >= cap) throw tooMany(now);
    await humanCheck(c, text, { gamertag: '', ...(humanCheckToken ? { humanCheck: humanCheckToken } : {}) });
    const { token, claims } = guests.start(now);
    if (address !== undefined && !(await ledger.linkAddress(address, utcDay(now), claims.userId, cap))) throw tooMany(now);
    c.header('Cache-Control', 'no-store');
    return c.json({ userId: claims.userId, gamertag: '', token, expiresAt: new Date(claims.exp).toISOString(), guest: true } satisfies PlayerSession, 201);
  }

  async function humanCheck(c: RelayContext, text: string, link: { gamertag: string; humanCheck?: string }) {
    if (!verifyLink) return;
    const raw = c.req.raw;
    // The request's own body is read by now: the hook gets a copy it can read again.
    const copy = new Request(raw.url, { method: raw.method, headers: raw.headers, body: text });
    let passed: boolean;
    try {
      passed = await verifyLink(copy, link);
    } catch (err) {
      logger?.warn({ event: 'link_check_failed', err }, 'verifyLink threw: the link is answered 503 link_check_unavailable');
      throw new RelayProblem('link_check_unavailable', undefined, { 'Retry-After': '5' });
    }
    if (!passed) throw new RelayProblem('link_refused');
  }

  return new Hono<RelayEnv>().post('/', async (c) => {
    rateLimited(limiter, addressScope(c, 'ip'));
    const { data, text } = await readJsonText(c, linkSchema);
    const { gamertag } = data;
    if (gamertag === undefined) {
      if (data.guestToken !== undefined) throw new RelayProblem('bad_request', 'gamertag: a guest links with a gamertag and its guestToken');
      return guest(c, text, data.humanCheck);
    }
    // The guest is checked before anything is asked of the service: a bad token costs nothing.
    const fromGuest = data.guestToken === undefined ? undefined : guests?.guestOf(data.guestToken);
    if (data.guestToken !== undefined && !fromGuest) throw new RelayProblem('bad_request', "guestToken: not a guest's token from this relay (or it expired)");
    const now = Date.now();
    const day = utcDay(now);
    // Without an address (the relay warned) there is nothing to count links under.
    const address = cap > 0 ? clientKey(c) : undefined;
    if (address !== undefined) {
      const linked = await ledger.linkedPlayers(address, day);
      const known = userIds.get(gamertag);
      if (linked.length >= cap && !(known !== undefined && linked.includes(known))) throw tooMany(now);
    }
    await humanCheck(c, text, { gamertag, ...(data.humanCheck ? { humanCheck: data.humanCheck } : {}) });

    const r = await payments.userIdByGamertag(gamertag);
    if (r.kind === 'refused' && (r.status === 400 || r.status === 404)) throw new RelayProblem('unknown_gamertag', `No player is called ${gamertag}`);
    if (r.kind !== 'ok') {
      const reason = r.kind === 'refused' ? `refused_${r.status}` : r.reason;
      logger?.warn({ event: 'link_failed', reason }, `a player could not link: the payments service did not resolve the gamertag (${reason})`);
      throw new RelayProblem('service_unavailable', undefined, { 'Retry-After': '5' });
    }
    const userId = r.data.id;
    remember(gamertag, userId);
    // Linking the same player again is free; another player past the cap waits for the next UTC day.
    if (address !== undefined && !(await ledger.linkAddress(address, day, userId, cap))) throw tooMany(now);

    const merge = fromGuest && guests ? await guests.merge(fromGuest, userId, gamertag) : undefined;
    const { token, claims } = tokens.issue(userId, gamertag);
    // A bearer token: no cache, shared or private, may keep it.
    c.header('Cache-Control', 'no-store');
    return c.json({ userId: claims.userId, gamertag, token, expiresAt: new Date(claims.exp).toISOString(), ...(merge ? { merge } : {}) } satisfies PlayerSession, 201);
  });
}
