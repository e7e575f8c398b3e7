import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { PayoutMode, ReferralAnswer, ReferralProgram } from '../../wire/relay-api.js';
import { countsDollars } from './claim-decision.js';
import type { Payouts } from './payouts.js';
import type { ClaimLimits, Ledger, LedgerEntry, NewClaim } from './ports/ledger.js';
import type { Qualification, Referral, ReferralStore } from './ports/referral-store.js';
import type { Prices } from './prices.js';
import {
  linkAnswer,
  newReferralCode,
  qualifies,
  REFERRAL_CODE,
  type ReferralSide,
  referralInDollars,
  referralKey,
  referralPriced,
  SELF_REFERRAL_WINDOW_MS,
} from './referral-decision.js';
import { Refusal } from './refusal.js';
import type { Settlements } from './settlements.js';
import { uuid7 } from './uuid7.js';

/** What /metrics counts of referrals: each link's answer, each qualification, each referrer's reward refused by the cap. */
export type ReferralOutcome = ReferralAnswer | 'qualified' | 'referrer_daily_cap';
export interface ReferralMetrics {
  referral(outcome: ReferralOutcome): void;
}

export interface ReferralsDeps {
  store: ReferralStore;
  ledger: Pick<Ledger, 'earnedSince'>;
  settlements: Settlements;
  payouts: Pick<Payouts, 'pay'>;
  /** The catalog's referral programs (none: links record first links only, and the claim path is untouched). */
  programs: readonly ReferralProgram[];
  limits: ClaimLimits;
  holdAboveSats: number;
  payoutMode: PayoutMode;
  logger: Pick<Logger, 'warn' | 'error'>;
  metrics?: ReferralMetrics | undefined;
  clock?: (() => number) | undefined;
  /** The BTC/USD price (core/prices.ts): needed when a program is in dollars (`referrerUsd`, `refereeUsd`) or the budget is. */
  prices?: Pick<Prices, 'forClaim' | 'forValue'> | undefined;
}

/** Referrals the sweep reads at a time (newest link first), page after page until none is left. */
const SWEEP_PAGE = 1_000;
/**
 * A referee's payments the sweep reads for a qualifying one, oldest first from when one can
 * qualify (of the program's achievement, if it names one): only the programs' own rewards come
 * before it (a few), however much came after.
 */
const EARNED_MAX = 200;

/** How often a player's address is written again while it claims from it: the 30-day window needs no finer time. */
const SEEN_AGAIN_MS = 3_600_000;
/** Players' addresses remembered as written, at most; then it starts again. */
const MAX_SEEN = 10_000;

/** The same body for a side's reward every time: a retry (or another relay) replays, never pays twice. */
const requestHash = (program: ReferralProgram, side: ReferralSide) => createHash('sha256').update(`referral\n${program.id}\n${side}`).digest('base64url');

/**
 * Referrals (issue 37): codes, the referral decided at a player's first link, and its
 * qualification when the referee is paid, which makes both rewards as ordinary claims (decided by
 * caps, budget, holds and the payout mode, through the one write primitive, told on each player's
 * stream). Qualification is recorded once, under the referrer's lock, before the rewards are made;
 * a relay that dies between the referee's payment and the rewards leaves them to the sweep.
 */
export function createReferrals(deps: ReferralsDeps) {
  const { store, ledger, settlements, payouts, programs, limits, holdAboveSats, payoutMode, logger, metrics, prices } = deps;
  const valued = countsDollars(limits);
  const now = () => (deps.clock ?? Date.now)();
  const byId = new Map(programs.map((p) => [p.id, p]));
  const ids = new Set(byId.keys());

  // Written at most once an hour per player and address from this relay: claims cost a write more only that often.
  const written = new Map<string, number>();
  /** The player claimed from `address`: remembered (a referral from it within 30 days is a self-referral). */
  async function seen(userId: string, address: string): Promise<void> {
    const at = now();
    const key = `${userId} ${address}`;
    if ((written.get(key) ?? Number.NEGATIVE_INFINITY) > at - SEEN_AGAIN_MS) return;
    await store.seen(userId, address, at);
    if (written.size >= MAX_SEEN) written.clear();
    written.set(key, at);
  }

  /** The player's referral code, made once. */
  const code = (userId: string) => store.code(userId, newReferralCode());

  /**
   * A player linked: the first link is recorded, then the code (if any) decided and its referrals
   * recorded, then the address remembered (a referrer's addresses make referrals from them
   * self-referrals). Undefined without a code or without programs.
   */
  async function atLink(userId: string, referralCode: string | undefined, address: string | undefined, at: number): Promise<ReferralAnswer | undefined> {
    const first = await store.firstLink(userId, at);
    if (!programs.length) return undefined;
    let answer: ReferralAnswer | undefined;
    if (referralCode !== undefined) {
      const ownerId = REFERRAL_CODE.test(referralCode) ? await store.ownerOf(referralCode) : undefined;
      const referrerWasHere =
        first.first && ownerId !== undefined && ownerId !== userId && address !== undefined && (await store.seenSince(ownerId, address, at - SELF_REFERRAL_WINDOW_MS));
      answer = linkAnswer({ first: first.first, userId, ownerId, referrerWasHere });
      // Only a first link is recorded: a referee has one referral per program, from its first link.
      if (first.first) {
        const refused = answer === 'pending' ? undefined : answer;
        await store.refer(
          programs.map((p) => ({
            programId: p.id,
            refereeId: userId,
            ...(ownerId !== undefined ? { referrerId: ownerId } : {}),
            state: refused ? 'refused' : 'pending',
            ...(refused ? { reason: refused } : {}),
            linkedAt: first.at,
          })),
        );
      }
      metrics?.referral(answer);
    }
    if (address !== undefined) await store.seen(userId, address, at);
    return answer;
  }

  /** Makes the side's reward (or finds it), and pays it when it was made here: whether it is decided for good. */
  async function rewardSide(program: ReferralProgram, refereeId: string, side: ReferralSide, userId: string, btcUsd: number | undefined, rejectReason?: string): Promise<boolean> {
    const { sats, terms } = referralPriced(program, side, btcUsd);
    const claim: NewClaim = {
      id: uuid7(),
      userId,
      idempotencyKey: referralKey(program, refereeId, side),
      requestHash: requestHash(program, side),
      achievementId: program.id,
      sats,
      // Its key makes it once per referee; a referrer earns the program's reward for each referee.
      repeat: { kind: 'cooldown', seconds: 0 },
      terms: { ...terms, referral: side },
      ...(rejectReason ? { rejectReason } : {}),
      ...(holdAboveSats > 0 && sats > holdAboveSats ? { hold: true } : {}),
      ...(payoutMode === 'balance' ? { credit: true } : {}),
    };
    const r = await settlements.claim(claim, limits);
    const entry = r.kind === 'created' && r.entry.state === 'sending' ? await payouts.pay(r.entry, program.title) : r.entry;
    return entry.state !== 'sending' && entry.state !== 'deferred';
  }

  /**
   * The price both rewards are decided at (issue 38): for a program in dollars, one young enough
   * (RELAY_PRICE_MAX_AGE_SECONDS, as any dollar claim); for a dollar budget, the last known. None:
   * this throws before either reward is made. The qualification is already recorded (store.qualify
   * ran first), so nothing is lost: the referral stays `qualified` without its rewards, and the
   * sweep (every five minutes, and at start) makes them at the price it holds then.
   */
  async function priceFor(program: ReferralProgram): Promise<number | undefined> {
    const dollars = referralInDollars(program);
    if (!dollars && !valued) return undefined;
    const held = prices ? await (dollars ? prices.forClaim() : prices.forValue()) : { unavailable: true as const, retryAfterSeconds: 60 };
    if ('unavailable' in held)
      throw new Refusal('price_unavailable', `referral program ${program.id}: no BTC/USD price young enough; the sweep rewards it later`, held.retryAfterSeconds);
    return held.btcUsd;
  }

  async function reward(program: ReferralProgram, refereeId: string, q: Pick<Qualification, 'referrerId' | 'referrerCapped'>) {
    const btcUsd = await priceFor(program);
    const referee = await rewardSide(program, refereeId, 'referee', refereeId, btcUsd);
    const referrer = await rewardSide(program, refereeId, 'referrer', q.referrerId, btcUsd, q.referrerCapped ? 'referrer_daily_cap' : undefined);
    if (referee && referrer) await store.rewarded(program.id, refereeId);
  }

  async function qualify(program: ReferralProgram, refereeId: string) {
    const q = await store.qualify(program.id, refereeId, now(), program.perReferrerDaily);
    if (!q) return;
    if (q.fresh) {
      metrics?.referral('qualified');
      if (q.referrerCapped) metrics?.referral('referrer_daily_cap');
    }
    await reward(program, refereeId, q);
  }

  /** An entry reached paid or credited: the referee's pending referrals it qualifies, qualified and rewarded. */
  async function settled(entry: LedgerEntry): Promise<void> {
    if ((entry.state !== 'paid' && entry.state !== 'credited') || ids.has(entry.achievementId) || entry.kind === 'withdrawal') return;
    for (const r of await store.pending(entry.userId)) {
      const program = byId.get(r.programId);
      if (program && qualifies(program, r.linkedAt, entry, ids)) await qualify(program, r.refereeId);
    }
  }

  /**
   * What a crash (or a store out of reach) left undone: pending referrals of the last 30 days whose
   * referee was paid a qualifying claim, and qualified ones whose rewards are missing or deferred.
   */
  async function sweep(): Promise<number> {
    const since = now() - SELF_REFERRAL_WINDOW_MS;
    let done = 0;
    let page: Referral[] | undefined;
    // Every page: a referral finished is not listed again, one left over stays behind the cursor.
    do {
      page = await store.unfinished(since, SWEEP_PAGE, page?.at(-1));
      for (const r of page) {
        const program = byId.get(r.programId);
        if (!program) continue;
        try {
          if (r.state === 'qualified' && r.referrerId !== undefined) await reward(program, r.refereeId, { referrerId: r.referrerId, referrerCapped: r.referrerCapped === true });
          else if (
            (await ledger.earnedSince(r.refereeId, r.linkedAt + program.afterPlaySeconds * 1000, program.afterAchievement, EARNED_MAX)).some((e) =>
              qualifies(program, r.linkedAt, e, ids),
            )
          )
            await qualify(program, r.refereeId);
          else continue;
          done++;
        } catch (err) {
          logger.error({ err, event: 'referral_sweep_failed', programId: r.programId, refereeId: r.refereeId }, 'a referral could not be finished: the next sweep tries again');
        }
      }
    } while (page.length === SWEEP_PAGE);
    return done;
  }

  // The qualifications under way: the relay's close and the tests wait for them.
  const inFlight = new Set<Promise<void>>();
  return {
    programs,
    code,
    atLink,
    seen,
    /** For the settlement gate's hook: never throws (what it could not do, the sweep does). */
    settled(entry: LedgerEntry): Promise<void> {
      const p = settled(entry)
        .catch((err: unknown) => logger.warn({ err, event: 'referral_not_qualified', rewardId: entry.id }, 'a referral could not be qualified now: the sweep tries again'))
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
      return p;
    },
    /** Settles once every qualification under way is done. */
    async idle(): Promise<void> {
      while (inFlight.size) await Promise.all(inFlight);
    },
    sweep,
    recent: (limit: number): Promise<Referral[]> => store.recent(limit),
  };
}

export type Referrals = ReturnType<typeof createReferrals>;
