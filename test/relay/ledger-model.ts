// A reference model of the relay's money, in plain TypeScript: what a claim, a payment's answer
// and each decision by hand must do to a reward, its reservation and the player's events. The
// differential test (ledger-differential.test.ts) holds both ledgers, through the relay's core, to
// it. The earning rules themselves (repeat, caps, budget, play time) are the relay's pure
// functions (core/claim-decision.ts): the model keeps its own books, reservations as sums of the
// rewards that reserve, in place of the stores' counters and functions. In balance mode a claim may
// be credited to the player's balance, and a withdrawal debits it (core/withdrawal-decision.ts
// decides it): a withdrawal goes through a payment's states, but counts on no cap, budget or repeat.

import { claimedState, dayRefusal, keyDecision, refusal, tooEarly } from '../../src/relay/core/claim-decision.js';
import { type RewardState, STATES } from '../../src/relay/core/lifecycle.js';
import type { BalanceFacts, ClaimLimits, WithdrawalLimits } from '../../src/relay/core/ports/ledger.js';
import { streakDay, streakSats } from '../../src/relay/core/streak.js';
import { poolRefusal, prizeKey, prizePlaces, resultsDecision } from '../../src/relay/core/tournament-decision.js';
import { withdrawalDecision } from '../../src/relay/core/withdrawal-decision.js';
import { utcDay } from '../../src/wire/earning-rules.js';
import type { CatalogEntry, RewardStatus, TournamentCatalogEntry } from '../../src/wire/relay-api.js';

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
  constructor(
    readonly limits: ClaimLimits,
    readonly holdAboveSats: number,
  ) {}

  /** Counts on the caps, the budget and the repeat rules: a reward, never a withdrawal. */
  private reserving = (r: ModelReward) => STATES[r.state].reserves && !r.withdrawal;
  private sum = (pick: (r: ModelReward) => boolean) => [...this.rewards.values()].filter((r) => this.reserving(r) && pick(r)).reduce((s, r) => s + r.sats, 0);
  budgetUsed = (day: string) => this.sum((r) => r.day === day);
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
    if (r.state === 'sending') this.send(r, service);
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
  }
  private pay(player: string, sats: number) {
    this.paid.set(player, (this.paid.get(player) ?? 0) + sats);
  }

  /** The payment of a sending reward, as the service answers. */
  private send(r: ModelReward, service: Service) {
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

  /** A claim under `key` (`credit`: in balance mode); what the relay answers (a status code's meaning, or the reward's state). */
  claim(player: { id: string; iat: number }, key: string, a: CatalogEntry, hash: string, now: number, service: Service, credit = false): string {
    const existing = this.rewards.get(key);
    const decision = keyDecision(existing && { state: existing.state, requestHash: existing.hash }, { requestHash: hash });
    if (decision === 'existing') return existing!.hash === hash ? existing!.state : 'key_reused';
    const minPlayMs = (a.minPlaySeconds ?? 0) * 1000;
    const day = utcDay(now);
    const early = tooEarly({ playStartedAt: player.iat, minPlayMs }, now) !== undefined;
    // A login streak: its day from the player's last reserving reward of it, its sats that day's step.
    const mine = [...this.rewards.values()].filter((r) => r.player === player.id && r.achievementId === a.id && this.reserving(r));
    const latest = mine.reduce<ModelReward | undefined>((l, r) => (l && l.createdAt >= r.createdAt ? l : r), undefined);
    const streak = a.repeat.kind === 'streak' ? streakDay(latest && { at: latest.createdAt, terms: { streakDay: latest.streakDay ?? 1 } }, now) : undefined;
    const sats = a.repeat.kind === 'streak' ? streakSats(a.repeat.sats, streak!) : a.sats;
    const hold = a.hold === true || (this.holdAboveSats > 0 && sats > this.holdAboveSats);
    let reason: string | undefined = early ? 'too_early' : undefined;
    if (!early) {
      const last = Math.max(-1, ...mine.map((r) => r.createdAt));
      const facts = {
        lastReservingAt: last < 0 ? undefined : last,
        userSats: this.sum((r) => r.player === player.id && r.day === day),
        projectSats: this.budgetUsed(day),
        lastDeniedAt: this.denied.get(`${player.id} ${a.id}`),
      };
      reason = refusal({ repeat: a.repeat, sats }, facts, this.limits, now);
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
    Object.assign(r, { sats, day, createdAt: now, credit, streakDay: streak });
    this.rewards.set(key, r);
    this.to(r, early ? 'deferred' : claimedState(reason, { hold, credit }), reason);
    if (r.state === 'sending') this.send(r, service);
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
    const places = prizePlaces(t.prizes, ranking);
    if (poolRefusal(places, this.budgetUsed(day), this.limits)) return 'daily_budget';
    this.posted.set(`${t.id} ${period}`, ranking.join('\n'));
    const credit = t.payout === 'balance';
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
      };
      this.rewards.set(r.key, r);
      const hold = t.hold === true || (this.holdAboveSats > 0 && p.sats > this.holdAboveSats);
      this.to(r, claimedState(undefined, { hold, credit }));
      return r;
    });
    let answer = service;
    for (const r of made)
      if (r.state === 'sending') {
        this.send(r, answer);
        answer = { kind: 'pay' };
      }
    return 'created';
  }

  approve(key: string, now: number, service: Service): 'settled' | 'refused' | 'not_in_review' {
    const r = this.rewards.get(key);
    if (r?.state !== 'held') return 'not_in_review';
    const day = utcDay(now);
    // A withdrawal counts on no cap or budget: nothing to decide again, it stays on its day.
    if (day !== r.day && !r.withdrawal) {
      const others = (pick: (x: ModelReward) => boolean) => this.sum((x) => x !== r && x.day === day && pick(x));
      if (dayRefusal({ sats: r.sats }, { userSats: others((x) => x.player === r.player), projectSats: others(() => true) }, this.limits)) return 'refused';
      r.day = day;
    }
    // A credit approved is on the balance: nothing to send.
    if (r.credit) {
      this.to(r, 'credited');
      return 'settled';
    }
    this.to(r, 'sending');
    this.send(r, service);
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
    if (action === 'reconcile') {
      if (!r.pending) return false;
      if (r.pending.completes) this.to(r, 'paid');
      else this.to(r, 'failed', 'payment_failed');
      r.pending = undefined;
      return true;
    }
    // Marked paid by hand: the operator says the service paid (a processing one that completes, say).
    if (action === 'mark-paid') this.to(r, 'paid');
    else this.to(r, 'failed', 'operator_marked_failed');
    return true;
  }
}
