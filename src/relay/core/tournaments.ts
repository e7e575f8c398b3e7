import type { Logger } from 'pino';
import type { PayoutMode, TournamentResults } from '../../wire/relay-api.js';
import type { Catalog } from './catalog.js';
import { countsDollars } from './claim-decision.js';
import { type Guests, isGuestId } from './guests.js';
import type { Payouts } from './payouts.js';
import type { ClaimLimits, Ledger, LedgerEntry, NewClaim } from './ports/ledger.js';
import { entryUsdMicros, inDollars } from './price.js';
import type { Prices } from './prices.js';
import { Refusal } from './refusal.js';
import type { Settlements } from './settlements.js';
import { listedTwice, prizeKey, prizePlaces, rankingHash } from './tournament-decision.js';
import { uuid7 } from './uuid7.js';

export interface TournamentsDeps {
  ledger: Pick<Ledger, 'knownPlayers' | 'find'>;
  settlements: Settlements;
  catalog: Catalog;
  payouts: Pick<Payouts, 'pay'>;
  limits: ClaimLimits;
  logger: Pick<Logger, 'error'>;
  /** RELAY_HOLD_ABOVE_SATS: a prize worth more waits for an operator. 0: none. */
  holdAboveSats: number;
  /** RELAY_PAYOUT_MODE (a tournament's own `payout` wins). */
  payoutMode: PayoutMode;
  /** The BTC/USD price (core/prices.ts): needed when a prize is in dollars, or the budget is. */
  prices?: Pick<Prices, 'forClaim' | 'forValue'> | undefined;
  /** Guest play's (core/guests.ts): a guest's prize committed after its link moves to the player. */
  guests?: Pick<Guests, 'claimed'> | undefined;
}

/** A post answered: its prizes in ranking order, recorded now (`created`) or by the same results before. */
export interface TournamentPosting {
  created: boolean;
  entries: LedgerEntry[];
}

/** A ranking as the relay reads it: each name's player (userIds), and what the ranking's hash is of (the same results posted again hash alike). */
interface Ranked {
  userIds: string[];
  hashed: string[];
}

/** The most names a refusal's detail lists (a ranking of strangers is said in one line). */
const NAMED = 20;
const named = (names: readonly string[]) => names.slice(0, NAMED).join(', ') + (names.length > NAMED ? ` and ${names.length - NAMED} more` : '');

/**
 * The game's server posts a tournament's results for a period (issue 37): one prize per place
 * that wins one, decided and recorded in one transaction of the store (all, or nothing), once per
 * tournament and period. A browser never can: the route is behind RELAY_GAME_SERVER_SECRET.
 * Refusals (a Refusal, nothing recorded): `unknown_tournament`, `duplicate_player`,
 * `unknown_player` (never linked with this relay; a guest, in a tournament paid at once), `results_already_posted`, `daily_budget`,
 * `price_unavailable` (a prize in dollars, or a dollar budget, and no price; a post already recorded is
 * answered as it stands, needing none).
 */
export function createTournaments({ ledger, settlements, catalog, payouts, limits, logger, holdAboveSats, payoutMode, prices, guests }: TournamentsDeps) {
  /**
   * A ranking's names as userIds. A player is known once linked with this relay (recorded at each
   * link): by userId, or by the gamertag they last linked with. The relay's own record, not the
   * service's lookup: a post of a thousand places costs one read, and answers the same when the
   * service is out of reach; the payment itself still goes to the userId's gamertag of the moment.
   * A guest's id (as the relay makes it) is a guest, known without a row (it may have earned
   * nothing yet): once merged, its player (the same read); else itself, when the prizes credit, and
   * never in a prize's place when they are paid at once (a guest has no gamertag). The hash takes a guest by its id,
   * merged or not: the same results posted again after the guest linked are the same results.
   */
  async function ranked(ranking: readonly string[], credit: boolean, prizePlaces: number): Promise<Ranked> {
    const twice = listedTwice(ranking);
    if (twice.length) throw new Refusal('duplicate_player', `Listed more than once: ${named(twice)}`);
    if (!ledger.knownPlayers) throw new Error('this ledger keeps no players: tournaments need the SQLite or PostgreSQL store');
    const known = new Map(await ledger.knownPlayers(ranking));
    const unknown = ranking.filter((n) => !known.has(n) && !isGuestId(n));
    if (unknown.length) throw new Refusal('unknown_player', `Never linked with this relay: ${named(unknown)}`);
    // Only a place that wins a prize needs a gamertag to be paid at once.
    const unpayable = credit ? [] : ranking.slice(0, prizePlaces).filter((n) => !known.has(n));
    if (unpayable.length) throw new Refusal('unknown_player', `Guests have no gamertag to be paid at once: ${named(unpayable)}`);
    const userIds = ranking.map((n) => known.get(n) ?? n);
    // A player listed by userId and by gamertag (or by a guest's id merged into it).
    const same = listedTwice(userIds);
    if (same.length)
      throw new Refusal('duplicate_player', `Listed more than once (by userId, gamertag or a guest's id): ${named(ranking.filter((n) => same.includes(known.get(n) ?? n)))}`);
    return { userIds, hashed: ranking.map((n, i) => (isGuestId(n) ? n : userIds[i]!)) };
  }

  /**
   * No price for a post in dollars: the same results posted before are answered as they were
   * decided (they need no price), found by their prizes' keys; a prize of other results under the
   * same keys is `results_already_posted`; else `price_unavailable` and nothing is recorded (other
   * results naming only other players are told apart once a price is back, 409 then).
   */
  async function postedBefore(tournamentId: string, period: string, userIds: readonly string[], hash: string, retryAfterSeconds: number): Promise<TournamentPosting> {
    const found = await Promise.all(userIds.slice(0, catalog.tournaments!.get(tournamentId)!.prizes.length).map((u, i) => ledger.find(u, prizeKey(tournamentId, period, i + 1))));
    if (found.some((e) => e !== undefined && e.requestHash !== hash)) throw new Refusal('results_already_posted', `Other results were posted for ${tournamentId} ${period}`);
    if (found.every((e) => e !== undefined)) return { created: false, entries: found as LedgerEntry[] };
    throw new Refusal(
      'price_unavailable',
      `${tournamentId}'s prizes are in dollars or counted on a dollar budget and the relay holds no recent BTC/USD price: nothing was recorded`,
      retryAfterSeconds,
    );
  }

  const valued = countsDollars(limits);

  return async function postResults(tournamentId: string, results: TournamentResults, by: string): Promise<TournamentPosting> {
    const tournament = catalog.tournaments?.get(tournamentId);
    if (!tournament) throw new Refusal('unknown_tournament', `No tournament ${tournamentId}`);
    const credit = (tournament.payout ?? payoutMode) === 'balance';
    const { userIds, hashed } = await ranked(results.ranking, credit, tournament.prizes.length);
    const hash = rankingHash(hashed);
    // Prizes in dollars are turned into sats at the post's price, once (issue 38): the price young
    // enough for a dollar claim, recorded on each prize's terms (usd, btcUsd) with the sats ones'.
    // Under a dollar budget, sats prizes are valued too (at the last price known, as a sats claim
    // is), so the pool is counted in dollars, as core/referrals.ts counts a referral's rewards.
    let btcUsd: number | undefined;
    const dollars = tournament.prizes.slice(0, userIds.length).some(inDollars);
    if (dollars || valued) {
      const held = prices ? await (dollars ? prices.forClaim() : prices.forValue()) : { unavailable: true as const, retryAfterSeconds: 60 };
      if ('unavailable' in held) return postedBefore(tournament.id, results.period, userIds, hash, held.retryAfterSeconds);
      btcUsd = held.btcUsd;
    }
    const prizes = prizePlaces(tournament.prizes, userIds, btcUsd).map(
      (p): NewClaim => ({
        id: uuid7(),
        userId: p.userId,
        idempotencyKey: prizeKey(tournament.id, results.period, p.place),
        requestHash: hash,
        achievementId: tournament.id,
        sats: p.sats,
        repeat: { kind: 'once' },
        terms: { ...p.terms, period: results.period, place: p.place },
        ...(tournament.hold || (holdAboveSats > 0 && p.sats > holdAboveSats) ? { hold: true } : {}),
        ...(credit ? { credit: true } : {}),
      }),
    );
    const r = await settlements.postTournament({ tournamentId, period: results.period, rankingHash: hash, by, prizes }, limits);
    switch (r.kind) {
      case 'other_results':
        throw new Refusal('results_already_posted', `Other results were posted for ${tournamentId} ${results.period}`);
      case 'refused': {
        const pool = prizes.reduce((s, p) => s + p.sats, 0);
        const poolUsd = prizes.reduce((s, p) => s + entryUsdMicros(p.terms), 0) / 1_000_000;
        const budget = limits.dailyBudgetUsd ? `$${limits.dailyBudgetUsd}` : `${limits.dailyBudgetSats} sats`;
        throw new Refusal(
          'daily_budget',
          `The prizes (${pool} sats${btcUsd === undefined ? '' : `, $${poolUsd}`}) do not fit what is left of today's budget (${budget}): nothing was recorded`,
        );
      }
      case 'existing':
        return { created: false, entries: r.entries };
      case 'created': {
        // Paid after the commit, by the one post that recorded them (a replay pays nothing), as any claim is.
        for (const { entry } of r.prizes)
          if (entry.state === 'sending') void payouts.pay(entry, tournament.title).catch((err: unknown) => logger.error({ err, rewardId: entry.id }, 'prize payment not settled'));
        // A guest that linked between the read and the commit: its prize is merged now, as a guest's
        // claim committed after its link is (a read per guest's prize, none for a player's).
        const entries = await Promise.all(r.prizes.map(({ entry }) => (guests && isGuestId(entry.userId) ? guests.claimed(entry.userId, entry) : entry)));
        return { created: true, entries };
      }
    }
  };
}

export type PostResults = ReturnType<typeof createTournaments>;
