import { randomBytes } from 'node:crypto';
import type { ReferralAnswer, ReferralProgram } from '../../wire/relay-api.js';
import type { LedgerEntry } from './ports/ledger.js';
import { type Amount, satsAt } from './price.js';

/**
 * The referral programs' decisions (issue 37), pure: both ledgers' stores keep the facts, and the
 * use case (core/referrals.ts) asks here what they mean, so SQLite and PostgreSQL decide alike.
 */

/** How far back an address the referrer linked or claimed from makes a referral from it a self-referral. */
export const SELF_REFERRAL_WINDOW_MS = 30 * 86_400_000;

// Crockford's base32, lowercase: no i, l, o or u to misread; URL-safe as it is.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * A new referral code: 10 characters of base32 from the system's CSPRNG, 50 bits. Not a secret
 * (players share it), but not guessable either: a bot trying codes finds one among a few
 * million players once in ~10^8 tries, each a link through the rate limit and a call to the service.
 */
export function newReferralCode(): string {
  const bytes = randomBytes(10);
  let code = '';
  for (const b of bytes) code += ALPHABET[b & 31];
  return code;
}

/** A referral code as a link may carry it: what newReferralCode makes. */
export const REFERRAL_CODE = /^[0-9a-hjkmnp-tv-z]{10}$/;

/**
 * What the link's facts mean for its referral code, in order: the player's own code, a link that
 * is not the userId's first, a code nobody has, a referrer who linked or claimed from here.
 */
export function linkAnswer(facts: {
  /** This is the userId's first link with the relay. */
  first: boolean;
  userId: string;
  /** Whose code it is, if anyone's. */
  ownerId: string | undefined;
  /** The referrer linked or claimed from this link's address (or its /64) within SELF_REFERRAL_WINDOW_MS. */
  referrerWasHere: boolean;
}): ReferralAnswer {
  if (facts.ownerId === facts.userId) return 'self_referral';
  if (!facts.first) return 'not_new';
  if (facts.ownerId === undefined) return 'unknown_code';
  if (facts.referrerWasHere) return 'self_referral';
  return 'pending';
}

/**
 * Whether the referee's entry qualifies the program's referral: paid (or credited) for a claim
 * made `afterPlaySeconds` after the referee's first link, of `afterAchievement` when one is named;
 * never a referral's own reward, nor a withdrawal.
 */
export function qualifies(program: ReferralProgram, linkedAt: number, entry: LedgerEntry, programIds: ReadonlySet<string>): boolean {
  if (entry.state !== 'paid' && entry.state !== 'credited') return false;
  if (entry.kind === 'withdrawal' || entry.terms?.referral !== undefined || programIds.has(entry.achievementId)) return false;
  if (program.afterAchievement !== undefined && entry.achievementId !== program.afterAchievement) return false;
  return entry.createdAt >= linkedAt + program.afterPlaySeconds * 1000;
}

/** Whether a referral qualified now is past the referrer's cap: `before` of the referrer's referrals qualified already on that UTC day. */
export const referrerCapped = (before: number, perReferrerDaily: number | undefined): boolean => perReferrerDaily !== undefined && before >= perReferrerDaily;

export type ReferralSide = 'referrer' | 'referee';

/** A side's reward as the program writes it: `<side>Sats`, or `<side>Usd` as `{ usd }` (issue 38). Read here only. */
export function referralAmount(program: ReferralProgram, side: ReferralSide): Amount {
  const usd = side === 'referrer' ? program.referrerUsd : program.refereeUsd;
  if (usd !== undefined) return { usd };
  const sats = side === 'referrer' ? program.referrerSats : program.refereeSats;
  // The catalog's check makes sure one of the pair is written.
  if (sats === undefined) throw new Error(`referral program ${program.id}: no ${side}Sats nor ${side}Usd`);
  return sats;
}

/** Whether either side's reward is in dollars: then rewarding it needs a price. */
export const referralInDollars = (program: ReferralProgram): boolean => program.referrerUsd !== undefined || program.refereeUsd !== undefined;

/** A side's reward in sats at `btcUsd` (needed for a side in dollars), and the terms to record: the one place a referral amount becomes sats. */
export const referralPriced = (program: ReferralProgram, side: ReferralSide, btcUsd?: number) => satsAt(referralAmount(program, side), btcUsd);

/** A side's reward in sats (at `btcUsd` for a side in dollars). */
export const referralSats = (program: ReferralProgram, side: ReferralSide, btcUsd?: number): number => referralPriced(program, side, btcUsd).sats;

/** The side's reward's idempotency key (under the side's userId): one per referee and program, whichever relay makes it, however often. */
export const referralKey = (program: Pick<ReferralProgram, 'id'>, refereeId: string, side: ReferralSide): string => `referral:${program.id}:${side}:${refereeId}`;
