import type { Logger } from 'pino';
import { nextUtcDay, utcDay } from '../../wire/earning-rules.js';
import type { PlayerSession } from '../../wire/relay-api.js';
import type { PaymentsClient } from '../payments/client.js';
import { GUEST_RENEWABLE_MS, type Guests } from './guests.js';
import type { PlayerClaims, PlayerTokens } from './player-tokens.js';
import type { Ledger } from './ports/ledger.js';
import type { Referrals } from './referrals.js';
import { Refusal } from './refusal.js';

/** How long a guest's token stays renewable, in days, as refusals say it. */
const RENEWABLE_DAYS = GUEST_RENEWABLE_MS / 86_400_000;

/**
 * A human check at link (a captcha's server-side verification, docs/threat-model.md): true to
 * issue the token, false to refuse it (403 `link_refused`); a hook that throws (its verifier out
 * of reach) answers 503 `link_check_unavailable`. Called before the relay asks the payments
 * service who the gamertag is, so it knows the gamertag, not the userId. `request` is a copy of
 * the link request whose body can be read.
 */
export type VerifyLink = (request: Request, link: { gamertag: string; humanCheck?: string }) => boolean | Promise<boolean>;

export interface PlayersDeps {
  payments: Pick<PaymentsClient, 'userIdByGamertag'>;
  tokens: PlayerTokens;
  ledger: Pick<Ledger, 'linkAddress' | 'linkedPlayers' | 'rememberPlayer'>;
  verifyLink?: VerifyLink | undefined;
  /** RELAY_LINKS_PER_ADDRESS_PER_DAY: different players one address may link per UTC day. 0: no cap. */
  linksPerAddressPerDay?: number;
  /** Where a link the service could not answer (`link_failed`) or a hook that threw (`link_check_failed`) is said, at warn. */
  logger?: Pick<Logger, 'warn'>;
  /** Balance mode: a link without a gamertag makes a guest, and one with a `guestToken` merges the guest's credits. */
  guests?: Guests | undefined;
  /** Referrals (issue 37): every link's first link recorded, and its referral code decided. */
  referrals?: Pick<Referrals, 'atLink'> | undefined;
}

/** A link as the player asked for it: no gamertag makes a guest (balance mode). */
export interface LinkRequest {
  gamertag?: string;
  humanCheck?: string;
  /** A guest's token: the guest's credits move to the player who links. */
  guestToken?: string;
  /** Another player's referral code: counts only on this userId's first link. */
  referralCode?: string;
}

/** Where a link comes from. */
export interface LinkContext {
  /** The client's address as the relay resolved it (IPv6 by /64); undefined when it cannot know. */
  address: string | undefined;
  now: number;
  /** A copy of the link request whose body can be read, for `verifyLink` (made only when there is one). */
  request: () => Request;
}

/** Gamertags this relay remembers the userId of, at most; then it starts again. */
const MAX_REMEMBERED = 10_000;

/**
 * The link use case: a gamertag becomes its permanent userId and a player token.
 *
 * Everything that can refuse a link comes before the call to the service (a refusal costs the
 * project no lookup): the address's links today, then the human check (the rate limit is the
 * door's, before the body is read). The lookup then gives the userId, and the link is recorded,
 * which decides two links racing past the cap.
 */
export function createPlayers({ payments, tokens, ledger, verifyLink, linksPerAddressPerDay: cap = 0, logger, guests, referrals }: PlayersDeps) {
  // Whose gamertag is whose, as the service last said here: lets a capped address link again a
  // player it already linked today (free, as ever) before the lookup. A hint only: the lookup
  // still names the player, and linkAddress has the last word. A relay that never saw the
  // gamertag (restarted, or another one behind the balancer) refuses that relink until tomorrow.
  const userIds = new Map<string, string>();
  const remember = (gamertag: string, userId: string) => {
    if (userIds.size >= MAX_REMEMBERED) userIds.clear();
    userIds.set(gamertag, userId);
  };
  const tooMany = (now: number) => new Refusal('too_many_players', `This address may link ${cap} players a day`, Math.ceil((nextUtcDay(now) - now) / 1000));

  async function humanCheck(link: { gamertag: string; humanCheck?: string }, request: () => Request) {
    if (!verifyLink) return;
    let passed: boolean;
    try {
      passed = await verifyLink(request(), link);
    } catch (err) {
      logger?.warn({ event: 'link_check_failed', err }, 'verifyLink threw: the link is answered 503 link_check_unavailable');
      throw new Refusal('link_check_unavailable', undefined, 5);
    }
    if (!passed) throw new Refusal('link_refused');
  }

  /**
   * A guest: counted against the address's links like a player, and checked by the same human
   * check. With its `guestToken`, the same guest again (renewed): it was counted and checked when made.
   */
  async function guest(asked: LinkRequest, from: LinkContext): Promise<PlayerSession> {
    if (!guests) throw new Refusal('bad_request', 'gamertag: a gamertag is required (guests play only in balance mode)');
    const { now } = from;
    if (asked.guestToken !== undefined) {
      const renewed = await guests.renew(asked.guestToken, now);
      if (!renewed)
        throw new Refusal('bad_request', `guestToken: not a guest's token from this relay, lapsed more than ${RENEWABLE_DAYS} days ago, or its guest linked a gamertag`);
      return sessionOf(renewed);
    }
    const address = cap > 0 ? from.address : undefined;
    if (address !== undefined && (await ledger.linkedPlayers(address, utcDay(now))).length >= cap) throw tooMany(now);
    await humanCheck({ gamertag: '', ...(asked.humanCheck ? { humanCheck: asked.humanCheck } : {}) }, from.request);
    const made = guests.start(now);
    if (address !== undefined && !(await ledger.linkAddress(address, utcDay(now), made.claims.userId, cap))) throw tooMany(now);
    return sessionOf(made);
  }

  const sessionOf = ({ token, claims }: { token: string; claims: PlayerClaims }): PlayerSession => ({
    userId: claims.userId,
    gamertag: '',
    token,
    expiresAt: new Date(claims.exp).toISOString(),
    guest: true,
  });

  /** Links a player (or makes a guest): the session, or a Refusal (nothing recorded). */
  async function link(asked: LinkRequest, from: LinkContext): Promise<PlayerSession> {
    const { gamertag } = asked;
    if (gamertag === undefined) return guest(asked, from);
    // The guest is checked before anything is asked of the service: a bad token costs nothing.
    const { now } = from;
    const fromGuest = asked.guestToken === undefined ? undefined : guests?.guestOf(asked.guestToken, now);
    if (asked.guestToken !== undefined && !fromGuest)
      throw new Refusal('bad_request', `guestToken: not a guest's token from this relay (or it lapsed more than ${RENEWABLE_DAYS} days ago)`);
    const day = utcDay(now);
    // Without an address (the relay warned) there is nothing to count links under.
    const address = cap > 0 ? from.address : undefined;
    if (address !== undefined) {
      const linked = await ledger.linkedPlayers(address, day);
      const known = userIds.get(gamertag);
      if (linked.length >= cap && !(known !== undefined && linked.includes(known))) throw tooMany(now);
    }
    await humanCheck({ gamertag, ...(asked.humanCheck ? { humanCheck: asked.humanCheck } : {}) }, from.request);

    const r = await payments.userIdByGamertag(gamertag);
    if (r.kind === 'refused' && (r.status === 400 || r.status === 404)) throw new Refusal('unknown_gamertag', `No player is called ${gamertag}`);
    if (r.kind !== 'ok') {
      const reason = r.kind === 'refused' ? `refused_${r.status}` : r.reason;
      logger?.warn({ event: 'link_failed', reason }, `a player could not link: the payments service did not resolve the gamertag (${reason})`);
      throw new Refusal('service_unavailable', undefined, 5);
    }
    const userId = r.data.id;
    remember(gamertag, userId);
    // Linking the same player again is free; another player past the cap waits for the next UTC day.
    if (address !== undefined && !(await ledger.linkAddress(address, day, userId, cap))) throw tooMany(now);

    // Linked with this relay: a tournament's ranking may name the player from now on (by userId, or this gamertag).
    await ledger.rememberPlayer?.(userId, gamertag, now);
    const merge = fromGuest && guests ? await guests.merge(fromGuest, userId, gamertag) : undefined;
    // The link succeeds whatever its referral code says: the answer says whether it may pay.
    const referral = await referrals?.atLink(userId, asked.referralCode, from.address, now);
    const { token, claims } = tokens.issue(userId, gamertag, now);
    return { userId: claims.userId, gamertag, token, expiresAt: new Date(claims.exp).toISOString(), ...(merge ? { merge } : {}), ...(referral ? { referral } : {}) };
  }

  return { link };
}

export type Players = ReturnType<typeof createPlayers>;
