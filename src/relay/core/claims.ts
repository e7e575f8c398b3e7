import { hash } from 'node:crypto';
import type { PayoutMode, RewardClaim } from '../../wire/relay-api.js';
import { amountOf, type Catalog } from './catalog.js';
import { countsDollars } from './claim-decision.js';
import type { Payouts } from './payouts.js';
import type { PlayerClaims } from './player-tokens.js';
import type { ClaimLimits, Ledger, LedgerEntry, NewClaim } from './ports/ledger.js';
import { type Amount, inDollars, satsAt } from './price.js';
import type { Prices } from './prices.js';
import { approvalCovers, approvedSatsOf } from './reviews.js';
import type { Settlements } from './settlements.js';
import { stepsInDollars } from './streak.js';
import { checkUnlock } from './unlock-proof.js';
import { uuid7 } from './uuid7.js';

/** A game's own server-side proof: true to pay, false or a reason code to refuse. */
export type VerifyClaim = (
  claim: { achievementId: string; occurredAt?: string; userId: string; gamertag: string },
  request: Request,
) => boolean | string | Promise<boolean | string>;

/** How a claim ended, for the route to answer. */
export type ClaimOutcome =
  /** Recorded (paid, rejected, failed or in review), or replayed as it stands now. */
  | { kind: 'answered'; entry: LedgerEntry; replayed: boolean }
  | { kind: 'unknown_achievement' }
  /** A tournament's id: its prizes are posted by the game's server (core/tournaments.ts), never claimed. */
  | { kind: 'not_claimable' }
  /** A referral program's id: the relay pays it by itself, a client never claims it. */
  | { kind: 'referral_not_claimable' }
  /** A guest claimed an achievement paid at once: it must link a gamertag first. */
  | { kind: 'gamertag_required' }
  /** The key was used with another body. */
  | { kind: 'key_reused' }
  /** The key's first request is still being paid: ask again shortly. */
  | { kind: 'in_flight' }
  /** Nothing was paid and the service was out of reach: the client retries with the same key. */
  | { kind: 'deferred' }
  /** Witnessed play: the player's session is not old enough yet; nothing final was recorded. Retry at `retryAt` (ms). */
  | { kind: 'too_early'; retryAt: number }
  /** Priced in dollars (or counted by a dollar budget) and no price young enough is known: nothing was recorded. */
  | { kind: 'price_unavailable'; retryAfterSeconds: number };

export interface ClaimsDeps {
  ledger: Ledger;
  settlements: Settlements;
  catalog: Catalog;
  payouts: Payouts;
  limits: ClaimLimits;
  verifyClaim?: VerifyClaim | undefined;
  /** RELAY_GAME_SERVER_SECRET: what unlock proofs are checked against (every one is tried). */
  gameServerSecrets?: readonly string[];
  /** RELAY_HOLD_ABOVE_SATS: a claim worth more waits for an operator. 0 or absent: none. */
  holdAboveSats?: number;
  /** RELAY_PAYOUT_MODE: `balance` credits a claim to the player's balance in place of a payment (an achievement's own `payout` wins). Default instant. */
  payoutMode?: PayoutMode;
  /** The BTC/USD price (core/prices.ts): needed when the catalog or a budget is in dollars. */
  prices?: Pick<Prices, 'forClaim' | 'forValue'> | undefined;
  /** Referral programs: remembers the address a player claimed from (a referral from it is a self-referral). Absent without programs. */
  seen?: ((userId: string, address: string) => Promise<void>) | undefined;
  /** Balance mode's guests: a guest's credit committed after the guest linked moves to its player (core/guests.ts `claimed`). */
  guestClaimed?: ((guestId: string, entry: LedgerEntry) => Promise<LedgerEntry>) | undefined;
}

// The proof is part of what was asked: a retry of the same intent (same key, same proof) replays.
// crypto.hash: one call, a quarter of createHash().update().digest()'s cost.
const requestHash = (c: RewardClaim) => hash('sha256', `${c.achievementId}\n${c.occurredAt ?? ''}${c.proof === undefined ? '' : `\n${c.proof}`}`, 'base64url');

/**
 * The claim use case: an achievement id under an idempotency key becomes at most one payment.
 * The relay decides the amount from its catalog; the ledger records the claim (or its refusal)
 * before the service is called; a replay answers what the key's entry is now.
 */
export function createClaims({
  ledger,
  settlements,
  catalog,
  payouts,
  limits,
  verifyClaim,
  gameServerSecrets = [],
  holdAboveSats = 0,
  payoutMode = 'instant',
  prices,
  seen,
  guestClaimed,
}: ClaimsDeps) {
  const valued = countsDollars(limits);
  /** Whether a streak's step may be above RELAY_HOLD_ABOVE_SATS (one in dollars: at some price). */
  const stepAbove = (step: Amount) => inDollars(step) || step > holdAboveSats;
  /** An intent already known under this key: replay it, or say why not (undefined: claim it afresh). */
  function known(entry: LedgerEntry, hash: string): ClaimOutcome | undefined {
    if (entry.requestHash !== hash) return { kind: 'key_reused' };
    if (entry.state === 'sending') return { kind: 'in_flight' };
    if (entry.state === 'deferred') return undefined;
    return { kind: 'answered', entry, replayed: true };
  }

  /** `address`: the client's, as the relay resolved it (grouped: IPv6 by /64). */
  return async function claim(player: PlayerClaims, key: string, body: RewardClaim, request: Request, address?: string): Promise<ClaimOutcome> {
    const achievement = catalog.get(body.achievementId);
    if (!achievement) {
      // A key decided before a release dropped or renamed its achievement is answered as it
      // stands: its retry (the first answer lost) must not tell a paid player it was refused.
      const before = await ledger.find(player.userId, key);
      const replay = before && known(before, requestHash(body));
      if (replay) return replay;
      if (catalog.tournaments?.has(body.achievementId)) return { kind: 'not_claimable' };
      return catalog.referrals?.has(body.achievementId) ? { kind: 'referral_not_claimable' } : { kind: 'unknown_achievement' };
    }
    const hash = requestHash(body);
    const credit = (achievement.payout ?? payoutMode) === 'balance';
    if (player.guest && !credit) return { kind: 'gamertag_required' };

    let rejectReason: string | undefined;
    let proofNonce: string | undefined;
    if (achievement.proof === 'server') {
      const proof = checkUnlock(gameServerSecrets, body.proof, { gamertag: player.gamertag, achievementId: achievement.id });
      if (proof.ok) proofNonce = proof.nonce;
      else rejectReason = proof.reason;
    }
    if (verifyClaim) {
      // A replay must not run the game's check again.
      const before = await ledger.find(player.userId, key);
      const replay = before && known(before, hash);
      if (replay) return replay;
      const { proof: _proof, ...claimed } = body;
      const verdict = rejectReason ? true : await verifyClaim({ ...claimed, userId: player.userId, gamertag: player.gamertag }, request);
      if (verdict !== true) rejectReason = typeof verdict === 'string' ? verdict : 'claim_not_verified';
    }
    if (seen && address !== undefined && !player.guest) await seen(player.userId, address);
    // The sats are fixed here, at the price held now, and recorded with it (terms): a later price
    // never changes a decided claim. A dollar-priced claim needs a price young enough; a sats one
    // is valued at the last price known, for a dollar budget only.
    // A streak with a step in dollars needs the price too: the ledger turns the day's step into sats
    // at the price the claim carries (terms.btcUsd; core/streak.ts), whichever day it turns out to be.
    const amount = amountOf(achievement);
    const dollars = inDollars(amount) || stepsInDollars(achievement.repeat);
    let price: number | undefined;
    if (dollars || valued) {
      const held = prices ? await (dollars ? prices.forClaim() : prices.forValue()) : { unavailable: true as const, retryAfterSeconds: 60 };
      if ('unavailable' in held) {
        // A key already decided is answered as it stands: it needs no price.
        const before = await ledger.find(player.userId, key);
        const replay = before && known(before, hash);
        return replay ?? { kind: 'price_unavailable', retryAfterSeconds: held.retryAfterSeconds };
      }
      price = held.btcUsd;
    }
    const { sats, terms } = satsAt(amount, price);
    const minPlayMs = (achievement.minPlaySeconds ?? 0) * 1000;
    const streak = achievement.repeat.kind === 'streak';
    // Built by assignments: a spread for each optional field made an object each, every claim.
    const recorded: NewClaim = {
      id: uuid7(),
      userId: player.userId,
      idempotencyKey: key,
      requestHash: hash,
      achievementId: achievement.id,
      gamertag: player.gamertag,
      sats,
      repeat: achievement.repeat,
    };
    if (price !== undefined) recorded.terms = terms;
    if (body.occurredAt) recorded.occurredAt = body.occurredAt;
    if (address !== undefined) recorded.address = address;
    if (rejectReason) recorded.rejectReason = rejectReason;
    if (minPlayMs) {
      recorded.minPlayMs = minPlayMs;
      recorded.playStartedAt = player.iat;
    }
    if (proofNonce) recorded.proofNonce = proofNonce;
    // An operator's approval that an outage deferred is not asked for again when its key claims
    // again at no more sats (approvalCovers); its audit trail is read only when a hold may apply
    // (a streak's: when a step may be above the limit, the ledger deciding which day it is).
    const holdable = achievement.hold || (holdAboveSats > 0 && (achievement.repeat.kind === 'streak' ? achievement.repeat.sats.some(stepAbove) : sats > holdAboveSats));
    const approvedSats = holdable ? await approvedSatsOf(ledger, player.userId, key) : undefined;
    if (streak) {
      // A streak's sats are the ledger's to decide (core/streak.ts), and so is its hold, by the same rule.
      if (achievement.hold) recorded.hold = true;
      if (holdAboveSats > 0) recorded.holdAboveSats = holdAboveSats;
      if (approvedSats !== undefined) recorded.approvedSats = approvedSats;
    } else if (holdable && !approvalCovers(approvedSats, sats)) recorded.hold = true;
    if (credit) recorded.credit = true;
    const result = await settlements.claim(recorded, limits);
    if (result.kind === 'existing') return known(result.entry, hash) ?? { kind: 'answered', entry: result.entry, replayed: true };
    if (result.entry.state === 'deferred' && result.entry.reason === 'too_early') return { kind: 'too_early', retryAt: player.iat + minPlayMs };
    // A guest's claim already past its token when the guest linked: its credit follows the others.
    const claimed =
      player.guest && guestClaimed && (result.entry.state === 'credited' || result.entry.state === 'held') ? await guestClaimed(player.userId, result.entry) : result.entry;
    // Refused, held for an operator or credited to a balance: nothing goes to the service now.
    const entry = claimed.state === 'sending' ? await payouts.pay(claimed, achievement.title) : claimed;
    return entry.state === 'deferred' ? { kind: 'deferred' } : { kind: 'answered', entry, replayed: false };
  };
}

export type Claims = ReturnType<typeof createClaims>;
