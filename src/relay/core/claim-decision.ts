import { limitBlock, repeatBlock } from '../../wire/earning-rules.js';
import type { ClaimLimits, DollarLimits, LedgerState, NewClaim } from './ports/ledger.js';
import { entryUsdMicros, usdMicros } from './price.js';
import type { Repeat } from './streak.js';

const DAY_MS = 86_400_000;

/**
 * The claim's decision, in the order both ledgers apply it under their locks. Pure: each ledger
 * reads the facts its own way (SQLite in one thread, PostgreSQL under the player's lock) and asks
 * here what they mean, so the two can never decide differently.
 */

/** What an idempotency key already known means for a new claim with it. */
export type KeyDecision = 'existing' | 'reclaim' | 'insert';

/**
 * `existing`: the key's entry is the answer, untouched. `reclaim`: a deferred entry (nothing was
 * paid, the service was out of reach) is claimed afresh with the same body. `insert`: a new key.
 */
export function keyDecision(existing: { state: LedgerState; requestHash: string } | undefined, claim: Pick<NewClaim, 'requestHash'>): KeyDecision {
  if (!existing) return 'insert';
  return existing.state === 'deferred' && existing.requestHash === claim.requestHash ? 'reclaim' : 'existing';
}

/** What the ledger read for the rules: the last reserving claim of this achievement, and the day's sats. */
export interface ClaimFacts {
  lastReservingAt: number | undefined;
  userSats: number;
  projectSats: number;
  /** The day's dollar value (micro-dollars) reserved by the player and by the project: read with a dollar cap or budget. */
  userUsdMicros?: number;
  projectUsdMicros?: number;
  /** Reserved today from the claim's address, every player together (0 without an address cap). */
  addressSats?: number;
  /** The claim's proof nonce was spent before (by any claim, under any key). */
  proofUsed?: boolean;
  /** When an operator last denied this player this achievement (ms; the denial's audit time), if ever. */
  lastDeniedAt?: number | undefined;
}

/** Which of the facts the rules in force read: a ledger reads no others (a rule that is off costs its claims nothing). */
export interface FactsRead {
  lastReserving: boolean;
  lastDenied: boolean;
  userSats: boolean;
  projectSats: boolean;
  addressSats: boolean;
}

/**
 * What `refusal` will look at for this claim under these limits. A repeat rule reads the last
 * reserving claim unless it is a cooldown of nothing (an achievement earned any number of times);
 * each cap and budget reads its day's total only when set. Dollar totals: `countsDollars`.
 */
export const factsRead = (claim: Pick<NewClaim, 'repeat' | 'address'>, limits: ClaimLimits): FactsRead => ({
  lastReserving: claim.repeat.kind !== 'cooldown' || claim.repeat.seconds > 0,
  lastDenied: (limits.denialCooldownHours ?? 0) > 0,
  userSats: limits.userDailyCapSats > 0,
  projectSats: limits.dailyBudgetSats > 0,
  addressSats: addressCapped(claim, limits),
});

/**
 * Witnessed play: when the claim may be decided (ms), if it came before the player's session was
 * `minPlayMs` old; undefined when it is due (or the achievement asks for no play time). Checked
 * first and decides nothing final: a claim too early is deferred, spends no proof, reserves nothing.
 */
export function tooEarly(claim: Pick<NewClaim, 'playStartedAt' | 'minPlayMs'>, now: number): number | undefined {
  if (!claim.minPlayMs || claim.playStartedAt === undefined) return undefined;
  const due = claim.playStartedAt + claim.minPlayMs;
  return now < due ? due : undefined;
}

/**
 * Why the claim is refused, or undefined to reserve it. Precedence: a refusal decided before the
 * ledger (the game's own check, a bad proof), a proof already spent, a denial by an operator too
 * recent, then the repeat policy, then the player's cap, then the budget, then the address's cap.
 */
export function refusal(claim: Pick<NewClaim, 'repeat' | 'sats' | 'rejectReason' | 'address' | 'terms'>, facts: ClaimFacts, limits: ClaimLimits, now: number): string | undefined {
  return (
    claim.rejectReason ??
    (facts.proofUsed ? 'proof_used' : undefined) ??
    deniedBlock(facts.lastDeniedAt, limits, now) ??
    repeatBlock(claim.repeat, facts.lastReservingAt, now)?.reason ??
    dailyBlock(claim, facts, limits) ??
    addressBlock(claim, facts.addressSats ?? 0, limits)
  );
}

/** Whether a dollar cap or budget is in force: then every claim is valued (terms' `usd`) and counted in micro-dollars. */
export const countsDollars = (limits: DollarLimits): boolean => (limits.dailyBudgetUsd ?? 0) > 0 || (limits.userDailyCapUsd ?? 0) > 0;

/**
 * The player's cap, then the project's budget, each in sats or in dollars (limitBlock's rule,
 * counted in micro-dollars for dollars): the claim's sats, and its value at the price it is
 * decided at, must fit what the day has reserved.
 */
export function dailyBlock(
  claim: Pick<NewClaim, 'sats' | 'terms'>,
  facts: Pick<ClaimFacts, 'userSats' | 'projectSats' | 'userUsdMicros' | 'projectUsdMicros'>,
  limits: ClaimLimits,
): 'user_daily_cap' | 'daily_budget' | undefined {
  const sats = limitBlock(claim.sats, { user: facts.userSats, project: facts.projectSats }, limits);
  const usd = countsDollars(limits)
    ? limitBlock(
        entryUsdMicros(claim.terms),
        { user: facts.userUsdMicros ?? 0, project: facts.projectUsdMicros ?? 0 },
        { userDailyCapSats: usdMicros(limits.userDailyCapUsd ?? 0), dailyBudgetSats: usdMicros(limits.dailyBudgetUsd ?? 0) },
      )
    : undefined;
  return sats === 'user_daily_cap' || usd === 'user_daily_cap' ? 'user_daily_cap' : (sats ?? usd);
}

/**
 * An operator denied this player this achievement less than `denialCooldownHours` ago: a claim of
 * it is refused (`denied_recently`), so a denial is not answered by the same claim at once.
 */
export function deniedBlock(lastDeniedAt: number | undefined, limits: ClaimLimits, now: number): 'denied_recently' | undefined {
  const hours = limits.denialCooldownHours ?? 0;
  return hours > 0 && lastDeniedAt !== undefined && now < lastDeniedAt + hours * 3_600_000 ? 'denied_recently' : undefined;
}

/** Whether the address's cap (sats per client address per UTC day, every player together) holds the claim. */
export function addressBlock(claim: Pick<NewClaim, 'sats' | 'address'>, addressSats: number, limits: ClaimLimits): 'address_daily_cap' | undefined {
  const cap = limits.addressDailyCapSats ?? 0;
  return cap > 0 && claim.address !== undefined && addressSats + claim.sats > cap ? 'address_daily_cap' : undefined;
}

/** Whether the claim's address is counted: only with an address and a cap. */
export const addressCapped = (claim: Pick<NewClaim, 'address'>, limits: ClaimLimits): claim is NewClaim & { address: string } =>
  claim.address !== undefined && (limits.addressDailyCapSats ?? 0) > 0;

/** The state a decided claim is recorded in: refused, held for an operator, or on its way to be paid (or, in balance mode, credited). */
export const claimedState = (reason: string | undefined, claim: Pick<NewClaim, 'hold' | 'credit'> = {}): LedgerState =>
  reason ? 'rejected' : claim.hold ? 'held' : claim.credit ? 'credited' : 'sending';

/**
 * A held claim approved on a later UTC day counts on that day: whether that day's player cap,
 * budget and address cap still have room for it (what it reserved on its own day is freed).
 */
export function dayRefusal(
  claim: Pick<NewClaim, 'sats' | 'address' | 'terms'>,
  facts: Pick<ClaimFacts, 'userSats' | 'projectSats' | 'addressSats' | 'userUsdMicros' | 'projectUsdMicros'>,
  limits: ClaimLimits,
): 'user_daily_cap' | 'daily_budget' | 'address_daily_cap' | undefined {
  return dailyBlock(claim, facts, limits) ?? addressBlock(claim, facts.addressSats ?? 0, limits);
}

/**
 * Whether a guest's credit, earned at `at`, is one the player already holds by its repeat rule:
 * `times` are when the player's reserving entries of the achievement were claimed (those merged
 * before it included). Once: any; daily (and streak): one on the same UTC day; cooldown: one within it.
 */
export function mergeRefusal(repeat: Repeat | undefined, at: number, times: readonly number[]): 'already_claimed' | 'already_claimed_today' | 'cooldown' | undefined {
  if (!repeat || !times.length) return undefined;
  // Plain loops over plain numbers: a guest's 1,000 credits of one achievement ask this of up to
  // 1,000 times each, half a million looks (a Date and a string per look made them seconds).
  switch (repeat.kind) {
    case 'once':
      return 'already_claimed';
    case 'daily':
    case 'streak': {
      // utcDay's day as a number.
      const day = Math.floor(at / DAY_MS);
      for (const t of times) if (Math.floor(t / DAY_MS) === day) return 'already_claimed_today';
      return undefined;
    }
    case 'cooldown': {
      const ms = repeat.seconds * 1000;
      // No cooldown: nothing is within it (and no look at the times).
      if (ms <= 0) return undefined;
      for (const t of times) if (Math.abs(t - at) < ms) return 'cooldown';
      return undefined;
    }
  }
}

/** A guest's credit as its merge is decided: when and on which day it was earned, its value, and whether the player already used its key. */
export interface MergeCredit {
  achievementId: string;
  at: number;
  day: string;
  sats: number;
  usdMicros: number;
  used: boolean;
}

/** What the player holds, as its ledger read it: when its reserving claims of an achievement were made, and a day's reserved sats and micro-dollars. */
export interface PlayerHolds {
  times(achievementId: string): number[];
  day(day: string): { userSats: number; userUsdMicros: number };
}

/** Whether a merge reads the player's days: only with a player cap (in sats or dollars). */
export const mergeReadsDays = (limits: ClaimLimits): boolean => limits.userDailyCapSats > 0 || (limits.userDailyCapUsd ?? 0) > 0;

/**
 * A guest's merge decided, credit by credit in the order they were earned: why each is dropped,
 * or undefined to move it. A key the player used, then the repeat rule (mergeRefusal), then the
 * player's cap on the credit's day, so that guests merged into one player never hand it more than
 * a day's cap (the budget counted each credit when the guest earned it). What a moved credit holds
 * counts for the next.
 */
export function mergeDecider(repeats: ReadonlyMap<string, Repeat>, limits: ClaimLimits, holds: PlayerHolds, prizes: ReadonlySet<string> = new Set()) {
  const times = new Map<string, number[]>();
  const days = new Map<string, { userSats: number; userUsdMicros: number }>();
  const capped = mergeReadsDays(limits);
  // The player's cap as limitBlock reads it, without the budget (it counted each credit when the
  // guest earned it): made once, not per credit (a `{ ...limits, x }` is a microsecond on Node 20).
  const satsCap = { userDailyCapSats: limits.userDailyCapSats, dailyBudgetSats: 0 };
  const usdCap = { userDailyCapSats: usdMicros(limits.userDailyCapUsd ?? 0), dailyBudgetSats: 0 };
  const overCap = (c: MergeCredit, day: { userSats: number; userUsdMicros: number }) =>
    (limitBlock(c.sats, { user: day.userSats, project: 0 }, satsCap) ?? limitBlock(c.usdMicros, { user: day.userUsdMicros, project: 0 }, usdCap)) ? 'user_daily_cap' : undefined;
  return (c: MergeCredit): 'already_claimed' | 'already_claimed_today' | 'cooldown' | 'user_daily_cap' | undefined => {
    let mine = times.get(c.achievementId);
    if (!mine) times.set(c.achievementId, (mine = [...holds.times(c.achievementId)]));
    let day = capped ? days.get(c.day) : undefined;
    if (capped && !day) days.set(c.day, (day = { ...holds.day(c.day) }));
    const reason = (c.used ? 'already_claimed' : mergeRefusal(repeats.get(c.achievementId), c.at, mine)) ?? (day && !prizes.has(c.achievementId) ? overCap(c, day) : undefined);
    if (reason) return reason;
    mine.push(c.at);
    if (day) {
      day.userSats += c.sats;
      day.userUsdMicros += c.usdMicros;
    }
    return undefined;
  };
}
