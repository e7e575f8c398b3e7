// A reference model of the relay's money, in plain TypeScript: what a claim, a payment's answer
// and each decision by hand must do to a reward, its reservation and the player's events. The
// differential test (ledger-differential.test.ts) holds both ledgers, through the relay's core, to
// it. The earning rules themselves (repeat, caps, budget, play time) are the relay's pure
// functions (core/claim-decision.ts): the model keeps its own books, reservations as sums of the
// rewards that reserve, in place of the stores' counters and functions. In balance mode a claim may
// be credited to the player's balance, and a withdrawal debits it (core/withdrawal-decision.ts
// decides it): a withdrawal goes through a payment's states, but counts on no cap, budget or repeat.
// Dollars (issue 38): a claim decided at a price carries its dollar value, counted by the dollar
// budget and cap. Referrals (issue 37): a referee's payment qualifies its referral, which makes
// both rewards as claims.

import { claimedState, countsDollars, dayRefusal, keyDecision, refusal, tooEarly } from '../../src/relay/core/claim-decision.js';
import { type RewardState, STATES } from '../../src/relay/core/lifecycle.js';
import type { BalanceFacts, ClaimLimits, LedgerEntry, WithdrawalLimits } from '../../src/relay/core/ports/ledger.js';
import { entryUsdMicros, satsAt } from '../../src/relay/core/price.js';
import { linkAnswer, qualifies, type ReferralSide, referralKey, referralSats, referrerCapped } from '../../src/relay/core/referral-decision.js';
import { approvalCovers } from '../../src/relay/core/reviews.js';
import { STREAK_LOOKBACK, streakDay, streakLastOf, streakSats } from '../../src/relay/core/streak.js';
import { isPrize, poolRefusal, prizeKey, prizeLimits, prizePlaces, resultsDecision } from '../../src/relay/core/tournament-decision.js';
import { withdrawalDecision } from '../../src/relay/core/withdrawal-decision.js';
import { utcDay } from '../../src/wire/earning-rules.js';
import type { CatalogEntry, ReferralAnswer, ReferralProgram, RewardStatus, TournamentCatalogEntry } from '../../src/wire/relay-api.js';

/** How the service answers a payment: paid; refused; out of reach (nothing sent); timed out (paid or not); processing (completes or fails). */
export type Service = { kind: 'pay' } | { kind: 'refuse' } | { kind: 'unavailable' } | { kind: 'timeout'; paid: boolean } | { kind: 'processing'; completes: boolean };

export interface ModelReward {
  key: string;
  player: string;
  achievementId: string;
  hash: string;
  sats: number;
  state: RewardState;
  reason: string | undefined;
  day: string;
  createdAt: number;
  /** Known to the service: a processing payment's fate, for reconcile. */
  pending?: { completes: boolean };
  /** Balance mode: decided as any claim, credited to the player's balance in place of a payment. */
  credit?: boolean;
  /** A withdrawal from the player's balance. */
  withdrawal?: boolean;
  hasPaymentId: boolean;
  /** A login streak's day (core/streak.ts decides it from the last reserving reward of it). */
  streakDay?: number;
  /** The dollar value it was decided at (issue 38): a dollar-priced reward's `usd`, or its sats at the price, with a dollar budget or cap. */
  usd?: number;
  /** An operator approved it once (its audit trail says so): deferred by an outage since, its key claims again without a hold at no more sats. */
  approved?: boolean;
}

/** How a claim is decided beyond its entry: credited (balance mode), the price it is valued at, a refusal decided before the ledger. */
export interface ClaimTerms {
  credit?: boolean;
  /** Its dollar value and the price (a dollar-priced achievement's, or its sats at the price with a dollar limit); `a.sats`: at that price. */
  value?: { usd: number; btcUsd: number };
  rejectReason?: string;
}

export interface ModelEvent {
  key: string;
  status: RewardStatus;
  sats: number;
  reason: string | undefined;
  kind?: 'withdrawal';
}

export class LedgerModel {
  readonly rewards = new Map<string, ModelReward>();
  readonly events = new Map<string, ModelEvent[]>();
  /** Sats the service paid, per player. */
  readonly paid = new Map<string, number>();
  /** When an operator last denied a player an achievement (`player achievement` → ms). */
  readonly denied = new Map<string, number>();
  /** Witnessed play per player: its time and the last heartbeat. */
  readonly play = new Map<string, { ms: number; last: number }>();
  /** The game server's raises of the allowance, by `player key`. */
  readonly raises = new Map<string, number>();
  /** Tournaments' results posted, by `tournament period`: their ranking. */
  readonly posted = new Map<string, string>();
  /** Referrals (issue 37): the catalog's program, each player's first link, each referee's referral. */
  program: ReferralProgram | undefined;
  readonly firstLinks = new Map<string, number>();
  readonly referrals = new Map<string, { referrer: string; linkedAt: number; state: 'pending' | 'qualified' | 'refused'; day?: string; capped?: boolean }>();
  /** The step's time (the core's clock): a qualification happens at it. */
  at = 0;
  /**
   * How the service answers the next payment, as the test's scripted service does: the step's
   * answer for the first payment it makes (whichever that is), then paid.
   */
  private next: Service = { kind: 'pay' };
  /** Rewards that reached paid (or credited through the core) in this step: their referrals are qualified after it, as the core does after the commit. */
  private settled: ModelReward[] = [];
  /** The BTC/USD price held now ('btc' steps set it): what the core values a referral's rewards at under a dollar limit. */
  btcUsd = 65_000;
  constructor(
    readonly limits: ClaimLimits,
    readonly holdAboveSats: number,
  ) {}

  /** Counts on the caps, the budget and the repeat rules: a reward, never a withdrawal. */
  private reserving = (r: ModelReward) => STATES[r.state].reserves && !r.withdrawal;
  private sum = (pick: (r: ModelReward) => boolean) => [...this.rewards.values()].filter((r) => this.reserving(r) && pick(r)).reduce((s, r) => s + r.sats, 0);
  budgetUsed = (day: string) => this.sum((r) => r.day === day);
  /** The day's dollar value in micro-dollars, as the dollar budget and cap count it. */
  private sumUsd = (pick: (r: ModelReward) => boolean) =>
    [...this.rewards.values()].filter((r) => this.reserving(r) && pick(r)).reduce((s, r) => s + entryUsdMicros({ ...(r.usd !== undefined ? { usd: r.usd } : {}) }), 0);
  budgetUsedUsd = (day: string) => this.sumUsd((r) => r.day === day) / 1_000_000;
  /** A player's balance: their credits (a credit held for an operator is not on it yet). */
  credited = (player: string) => [...this.rewards.values()].filter((r) => r.player === player && r.state === 'credited').reduce((s, r) => s + r.sats, 0);
  /** Withdrawn: paid or under way (a withdrawal's reserving states). */
  private withdrawn = (player: string, day?: string) =>
    [...this.rewards.values()]
      .filter((r) => r.withdrawal && r.player === player && STATES[r.state].reserves && (day === undefined || r.day === day))
      .reduce((s, r) => s + r.sats, 0);
  balance = (player: string, now: number): BalanceFacts => ({
    creditedSats: this.credited(player),
    withdrawnSats: this.withdrawn(player),
    withdrawnTodaySats: this.withdrawn(player, utcDay(now)),
    playMs: this.play.get(player)?.ms ?? 0,
    raisedSats: [...this.raises].filter(([k]) => k.startsWith(`${player} `)).reduce((s, [, sats]) => s + sats, 0),
  });

  /** A heartbeat: the time since the last one counts when 0 < gap ≤ maxGapMs. */
  beat(player: string, now: number, maxGapMs: number): number {
    const last = this.play.get(player);
    const gap = last ? now - last.last : Number.POSITIVE_INFINITY;
    const ms = (last?.ms ?? 0) + (gap > 0 && gap <= maxGapMs ? gap : 0);
    this.play.set(player, { ms, last: Math.max(now, last?.last ?? now) });
    return ms;
  }

  raise(player: string, key: string, sats: number): boolean {
    if (this.raises.has(`${player} ${key}`)) return false;
    this.raises.set(`${player} ${key}`, sats);
    return true;
  }

  /** A withdrawal under `key`: its refusal, or the entry's state (a known key: as it is). Paid next, as a claim's payment. */
  withdraw(
    player: string,
    key: string,
    sats: number | undefined,
    hash: string,
    now: number,
    limits: WithdrawalLimits,
    service: Service,
  ): { refusal?: string; state?: RewardState } {
    const existing = this.rewards.get(key);
    if (existing && (!existing.withdrawal || keyDecision({ state: existing.state, requestHash: existing.hash }, { requestHash: hash }) === 'existing'))
      return { state: existing.state };
    const decided = withdrawalDecision(sats, this.balance(player, now), limits);
    if ('refusal' in decided) return { refusal: decided.refusal };
    this.next = service;
    const r: ModelReward = existing ?? {
      key,
      player,
      achievementId: '',
      hash,
      sats: 0,
      state: 'deferred',
      reason: undefined,
      day: '',
      createdAt: now,
      hasPaymentId: false,
      withdrawal: true,
    };
    Object.assign(r, { sats: decided.sats, day: utcDay(now), createdAt: now });
    this.rewards.set(key, r);
    this.to(r, decided.hold ? 'held' : 'sending');
    if (r.state === 'sending') this.send(r);
    // A withdrawal qualifies no referral: nothing settled is left for the next step.
    this.settled = [];
    return { state: r.state };
  }

  private to(r: ModelReward, state: RewardState, reason?: string) {
    r.state = state;
    r.reason = state === 'sending' ? undefined : reason;
    if (STATES[state].told) {
      const list = this.events.get(r.player) ?? [];
      list.push({ key: r.key, status: STATES[state].status, sats: r.sats, reason: r.reason, ...(r.withdrawal ? { kind: 'withdrawal' as const } : {}) });
      this.events.set(r.player, list);
    }
    // Only a payment settles through the core here: the test's credits go to the ledger itself, past the core's settlement gate.
    if (state === 'paid') this.settled.push(r);
  }

  /** A player links, with a referrer's code or none: the link's referral answer. */
  link(player: string, referrer: string | undefined, now: number): ReferralAnswer | undefined {
    const first = !this.firstLinks.has(player);
    if (first) this.firstLinks.set(player, now);
    if (!this.program || referrer === undefined) return undefined;
    const answer = linkAnswer({ first, userId: player, ownerId: referrer, referrerWasHere: false });
    if (first) this.referrals.set(player, { referrer, linkedAt: now, state: answer === 'pending' ? 'pending' : 'refused' });
    return answer;
  }

  /** The step's settled rewards, in order: each may qualify its player's referral (core/referrals.ts, after the commit). */
  private qualifyAll() {
    while (this.settled.length) this.qualify(this.settled.shift()!);
  }

  /** A payment of the referee's may qualify its referral: then both rewards, referee's first, each a claim. */
  private qualify(r: ModelReward) {
    const p = this.program;
    const ref = this.referrals.get(r.player);
    if (!p || ref?.state !== 'pending') return;
    const entry = { state: r.state, achievementId: r.achievementId, createdAt: r.createdAt, ...(r.withdrawal ? { kind: 'withdrawal' } : {}) } as LedgerEntry;
    if (!qualifies(p, ref.linkedAt, entry, new Set([p.id]))) return;
    const day = utcDay(this.at);
    const before = [...this.referrals.values()].filter((x) => x.referrer === ref.referrer && x.state === 'qualified' && x.day === day).length;
    Object.assign(ref, { state: 'qualified', day, capped: referrerCapped(before, p.perReferrerDaily) });
    const sides: Array<[ReferralSide, string, string | undefined]> = [
      ['referee', r.player, undefined],
      ['referrer', ref.referrer, ref.capped ? 'referrer_daily_cap' : undefined],
    ];
    // Under a dollar budget or cap each is valued at the price held (core/referrals.ts), as a claim is.
    for (const [side, player, reject] of sides) {
      const a: CatalogEntry = { id: p.id, title: p.title, sats: referralSats(p, side), repeat: { kind: 'cooldown', seconds: 0 } };
      const value = countsDollars(this.limits) ? { usd: satsAt(a.sats, this.btcUsd).terms.usd!, btcUsd: this.btcUsd } : undefined;
      this.decide({ id: player, iat: 0 }, referralKey(p, r.player, side), a, `referral ${side}`, this.at, {
        ...(reject ? { rejectReason: reject } : {}),
        ...(value ? { value } : {}),
      });
    }
  }
  private pay(player: string, sats: number) {
    this.paid.set(player, (this.paid.get(player) ?? 0) + sats);
  }

  /** The payment of a sending reward, as the service answers it (the step's answer, if no payment took it yet). */
  private send(r: ModelReward) {
    const service = this.next;
    this.next = { kind: 'pay' };
    switch (service.kind) {
      case 'pay':
        this.pay(r.player, r.sats);
        r.hasPaymentId = true;
        return this.to(r, 'paid');
      case 'refuse':
        return this.to(r, 'failed', 'payment_refused');
      case 'unavailable':
        return this.to(r, 'deferred', 'unreachable');
      case 'timeout':
        if (service.paid) this.pay(r.player, r.sats);
        return this.to(r, 'needs_review', 'timeout');
      case 'processing':
        // The service goes on with it whatever the relay does: it pays when it completes.
        if (service.completes) this.pay(r.player, r.sats);
        r.hasPaymentId = true;
        r.pending = { completes: service.completes };
        return this.to(r, 'needs_review', 'payment_processing');
    }
  }

  /** A claim under `key`; what the relay answers (a status code's meaning, or the reward's state); then the referrals its payment qualifies. */
  claim(player: { id: string; iat: number }, key: string, a: CatalogEntry, hash: string, now: number, service: Service, terms: ClaimTerms = {}): string {
    this.next = service;
    const answer = this.decide(player, key, a, hash, now, terms);
    this.qualifyAll();
    return answer;
  }

  private decide(player: { id: string; iat: number }, key: string, a: CatalogEntry, hash: string, now: number, { credit = false, value, rejectReason }: ClaimTerms): string {
    const existing = this.rewards.get(key);
    const decision = keyDecision(existing && { state: existing.state, requestHash: existing.hash }, { requestHash: hash });
    if (decision === 'existing') return existing!.hash === hash ? existing!.state : 'key_reused';
    const minPlayMs = (a.minPlaySeconds ?? 0) * 1000;
    const day = utcDay(now);
    const early = tooEarly({ playStartedAt: player.iat, minPlayMs }, now) !== undefined;
    // A login streak: its day from the player's last reserving reward of it, its sats that day's step.
    const mine = [...this.rewards.values()].filter((r) => r.player === player.id && r.achievementId === a.id && this.reserving(r));
    const newestFirst = [...mine].sort((x, y) => y.createdAt - x.createdAt).slice(0, STREAK_LOOKBACK);
    const last = streakLastOf(newestFirst.map((r) => ({ at: r.createdAt, terms: { streakDay: r.streakDay ?? 1 } })));
    const streak = a.repeat.kind === 'streak' ? streakDay(last, now) : undefined;
    const sats = a.repeat.kind === 'streak' ? streakSats(a.repeat.sats, streak!) : a.sats;
    // A streak is valued at its day's sats (core/streak.ts's decideStreak), not its first day's.
    const usd = value && (a.repeat.kind === 'streak' ? satsAt(sats, value.btcUsd).terms.usd : value.usd);
    // An approval an outage deferred is not asked for again at no more sats (a streak's day too).
    const approvedSats = existing?.state === 'deferred' && existing.approved ? existing.sats : undefined;
    const hold = (a.hold === true || (this.holdAboveSats > 0 && sats > this.holdAboveSats)) && !approvalCovers(approvedSats, sats);
    let reason: string | undefined = early ? 'too_early' : undefined;
    if (!early) {
      const last = Math.max(-1, ...mine.map((r) => r.createdAt));
      const facts = {
        lastReservingAt: last < 0 ? undefined : last,
        userSats: this.sum((r) => r.player === player.id && r.day === day),
        projectSats: this.budgetUsed(day),
        userUsdMicros: this.sumUsd((r) => r.player === player.id && r.day === day),
        projectUsdMicros: this.sumUsd((r) => r.day === day),
        lastDeniedAt: this.denied.get(`${player.id} ${a.id}`),
      };
      reason = refusal({ repeat: a.repeat, sats, ...(usd !== undefined ? { terms: { usd } } : {}), ...(rejectReason ? { rejectReason } : {}) }, facts, this.limits, now);
    }
    const r: ModelReward = existing ?? {
      key,
      player: player.id,
      achievementId: a.id,
      hash,
      sats: 0,
      state: 'deferred',
      reason: undefined,
      day,
      createdAt: now,
      hasPaymentId: false,
    };
    // Decided whole, as it is asked now: credited or paid.
    Object.assign(r, { sats, day, createdAt: now, credit, streakDay: streak, usd });
    this.rewards.set(key, r);
    this.to(r, early ? 'deferred' : claimedState(reason, { hold, credit }), reason);
    if (r.state === 'sending') this.send(r);
    return r.state;
  }

  /**
   * A tournament's results (issue 37): the same results again change nothing, other ones are
   * refused, a pool past the day's budget records nothing; else one prize per place, held above
   * the threshold, credited in balance mode, the others paid in place order (the first payment
   * answered as `service` says, the others paid).
   */
  postTournament(t: TournamentCatalogEntry, period: string, ranking: string[], now: number, service: Service): 'created' | 'existing' | 'other_results' | 'daily_budget' {
    const decided = resultsDecision(this.posted.get(`${t.id} ${period}`), ranking.join('\n'));
    if (decided !== 'insert') return decided;
    const day = utcDay(now);
    // Under a dollar budget every prize is valued at the price (core/tournaments.ts), and the pool counted in dollars too.
    const places = prizePlaces(t.prizes, ranking, countsDollars(this.limits) ? this.btcUsd : undefined);
    if (
      poolRefusal(
        places,
        this.budgetUsed(day),
        this.limits,
        this.sumUsd((r) => r.day === day),
      )
    )
      return 'daily_budget';
    this.posted.set(`${t.id} ${period}`, ranking.join('\n'));
    const credit = t.payout === 'balance';
    this.next = service;
    const made = places.map((p) => {
      const r: ModelReward = {
        key: prizeKey(t.id, period, p.place),
        player: p.userId,
        achievementId: t.id,
        hash: '',
        sats: p.sats,
        state: 'deferred',
        reason: undefined,
        day,
        createdAt: now,
        credit,
        hasPaymentId: false,
        ...(p.terms?.usd !== undefined ? { usd: p.terms.usd } : {}),
      };
      this.rewards.set(r.key, r);
      const hold = t.hold === true || (this.holdAboveSats > 0 && p.sats > this.holdAboveSats);
      this.to(r, claimedState(undefined, { hold, credit }));
      // Credited by the core's settlement gate: it may qualify a referral, as a payment does.
      if (r.state === 'credited') this.settled.push(r);
      return r;
    });
    for (const r of made) if (r.state === 'sending') this.send(r);
    this.qualifyAll();
    return 'created';
  }

  approve(key: string, now: number, service: Service): 'settled' | 'refused' | 'not_in_review' {
    const r = this.rewards.get(key);
    if (r?.state !== 'held') return 'not_in_review';
    const day = utcDay(now);
    // A withdrawal counts on no cap or budget: nothing to decide again, it stays on its day.
    if (day !== r.day && !r.withdrawal) {
      const others = (pick: (x: ModelReward) => boolean) => this.sum((x) => x !== r && x.day === day && pick(x));
      const othersUsd = (pick: (x: ModelReward) => boolean) => this.sumUsd((x) => x !== r && x.day === day && pick(x));
      const facts = {
        userSats: others((x) => x.player === r.player),
        projectSats: others(() => true),
        userUsdMicros: othersUsd((x) => x.player === r.player),
        projectUsdMicros: othersUsd(() => true),
      };
      // A prize on the day's budget alone, as it was posted.
      const limits = isPrize({ idempotencyKey: r.key }) ? prizeLimits(this.limits) : this.limits;
      if (dayRefusal({ sats: r.sats, ...(r.usd !== undefined ? { terms: { usd: r.usd } } : {}) }, facts, limits)) return 'refused';
      r.day = day;
    }
    r.approved = true;
    // A credit approved is on the balance: nothing to send.
    if (r.credit) {
      this.to(r, 'credited');
      return 'settled';
    }
    this.next = service;
    this.to(r, 'sending');
    this.send(r);
    this.qualifyAll();
    return 'settled';
  }

  deny(key: string, now: number): boolean {
    const r = this.rewards.get(key);
    if (r?.state !== 'held') return false;
    this.to(r, 'rejected', 'denied_by_operator');
    this.denied.set(`${r.player} ${r.achievementId}`, now);
    return true;
  }

  /** reconcile, mark-paid, mark-failed: an operator's decisions about a reward in review. */
  review(key: string, action: 'reconcile' | 'mark-paid' | 'mark-failed'): boolean {
    const r = this.rewards.get(key);
    if (r?.state !== 'needs_review') return false;
    // No answer of its own: a referral it qualifies is paid.
    this.next = { kind: 'pay' };
    if (action === 'reconcile') {
      if (!r.pending) return false;
      if (r.pending.completes) this.to(r, 'paid');
      else this.to(r, 'failed', 'payment_failed');
      r.pending = undefined;
    }
    // Marked paid by hand: the operator says the service paid (a processing one that completes, say).
    else if (action === 'mark-paid') this.to(r, 'paid');
    else this.to(r, 'failed', 'operator_marked_failed');
    this.qualifyAll();
    return true;
  }
}
