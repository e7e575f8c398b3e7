import type { GuestMerge as GuestMergeView } from '../../wire/relay-api.js';
import { achievementsOf, type Catalog } from './catalog.js';
import type { PlayerClaims, PlayerTokens } from './player-tokens.js';
import type { ClaimLimits, LedgerEntry } from './ports/ledger.js';
import type { Settlements } from './settlements.js';
import { uuid7 } from './uuid7.js';

/**
 * How long after its token lapsed a guest can still renew it, or link with it: a guest has no
 * gamertag to link again, so its token is all that names its credits.
 */
export const GUEST_RENEWABLE_MS = 30 * 86_400_000;

/** A guest's id: made by the relay, never a userId of the service's (those are UUIDs). */
const guestId = () => `guest_${uuid7()}`;

/** Whether a name is a guest's id exactly as guestId makes it (`guest_` and a lowercase UUIDv7). */
export const isGuestId = (name: string): boolean => /^guest_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(name);

export interface GuestsDeps {
  settlements: Settlements;
  tokens: PlayerTokens;
  catalog: Catalog;
  /** The player's caps: a merge holds the player to its cap on each credit's day. */
  limits: ClaimLimits;
  /** The player a guest was merged into, if it was (the ledger's). */
  mergedInto: (guestId: string) => Promise<string | undefined>;
}

/**
 * Guest play (balance mode): a player earns before owning a gamertag, under a relay-made id, and
 * the credits move to the player's balance when the guest links one.
 */
export function createGuests({ settlements, tokens, catalog, limits, mergedInto }: GuestsDeps) {
  // A tournament's prize moves whatever the player's cap: the game's server awarded it (a post is never refused by a cap).
  const rules = { repeats: new Map(achievementsOf(catalog).map((a) => [a.id, a.repeat])), limits, prizes: new Set(catalog.tournaments?.keys()) };

  /** A new guest and its token. */
  const start = (now = Date.now()) => tokens.issue(guestId(), '', now, true);

  /** The guest a token names, if it is a genuine guest's token, unexpired or lapsed less than GUEST_RENEWABLE_MS ago. */
  function guestOf(token: string, now = Date.now()): PlayerClaims | undefined {
    const claims = tokens.verify(token, now, GUEST_RENEWABLE_MS);
    return claims?.guest ? claims : undefined;
  }

  /** A new token for the guest a token names (see guestOf), unless it linked a gamertag since. */
  async function renew(token: string, now = Date.now()) {
    const guest = guestOf(token, now);
    if (!guest || (await retired(guest))) return undefined;
    return tokens.issue(guest.userId, '', now, true);
  }

  /** Moves a guest's credits to the player who linked (once: a second merge moves nothing). */
  async function merge(guest: PlayerClaims, userId: string, gamertag: string): Promise<GuestMergeView> {
    const r = await settlements.merge(guest.userId, userId, rules, { actor: `player:${gamertag}`, action: `merge ${guest.userId}` });
    return {
      guestId: guest.userId,
      moved: r.moved.length,
      movedSats: r.moved.reduce((n, s) => n + s.entry.sats, 0),
      dropped: r.dropped.map(({ entry }) => ({ id: entry.id, achievementId: entry.achievementId, sats: entry.sats, reason: entry.reason ?? 'already_claimed' })),
    };
  }

  /**
   * A guest's claim committed. A claim already past its token check when the guest's link merged
   * it commits afterwards, the guest's: it is merged now, into the same player by the same rules
   * (it moves, or stays the guest's, rejected), and told to that player. Costs a guest's claim one
   * read; a player's nothing.
   */
  async function claimed(guestId: string, entry: LedgerEntry): Promise<LedgerEntry> {
    const userId = await mergedInto(guestId);
    if (userId === undefined) return entry;
    const r = await settlements.merge(guestId, userId, rules, { actor: 'relay', action: `merge ${guestId} (a claim committed after its link)` });
    return [...r.moved, ...r.dropped].find((s) => s.entry.id === entry.id)?.entry ?? entry;
  }

  /** Whether a guest's token no longer works: the guest linked a gamertag. */
  const retired = async (guest: PlayerClaims) => guest.guest === true && (await mergedInto(guest.userId)) !== undefined;

  return { start, guestOf, renew, merge, claimed, retired };
}

export type Guests = ReturnType<typeof createGuests>;
