// Both ledgers decide money alike: random sequences of what players, the payments service and
// operators do (claims, retries under the same key, claims before their play time, price changes,
// cap and budget edges, payments paid, refused, out of reach or timed out, approvals on later
// days, denials and the claims refused after them, reconcile, mark-paid, mark-failed, claims credited to a balance and
// their approvals, withdrawals from the balance (paid, held, refused, restored), heartbeats and the allowance's raises,
// login streaks across days, missed days and failed payments, tournaments' results, prices in dollars with
// BTC/USD price steps and dollar budgets and caps, referral links and their qualification with both
// rewards and the referrer's daily cap)
// run through the relay's core on SQLite, on PostgreSQL
// and on a reference model (ledger-model.ts); the rewards, the reservations, the player's events
// and what the service paid must be the model's after every step.
//
// A fixed seed runs in `npm test`; `npm run fuzz:ledger -- --runs N [--seed S]` runs more. A
// failure prints its shrunk sequence and the seed to replay it.

import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Achievement, amountOf, createCatalog } from '../../src/relay/core/catalog.js';
import { countsDollars } from '../../src/relay/core/claim-decision.js';
import { createCore } from '../../src/relay/core/create-core.js';
import type { ClaimLimits, NewClaim, WithdrawalLimits, WithdrawalRefusal } from '../../src/relay/core/ports/ledger.js';
import { satsAt } from '../../src/relay/core/price.js';
import { approvalCovers, approvedSatsOf, type ReviewAction } from '../../src/relay/core/reviews.js';
import { PLAY_BEAT_GAP_MS } from '../../src/relay/core/withdrawal-decision.js';
import { createLogger, openPgStore, openSqliteStore, type RelayStore } from '../../src/relay/index.js';
import type { PaymentsClient } from '../../src/relay/payments/client.js';
import { utcDay } from '../../src/wire/earning-rules.js';
import type { CatalogEntry, ReferralProgram, RewardRecord, TournamentCatalogEntry } from '../../src/wire/relay-api.js';
import { freshDatabase } from '../helpers/postgres.js';
import { type ClaimTerms, LedgerModel, type ModelReward, type Service } from './ledger-model.js';

const postgresUrl = inject('postgresUrl');
const RUNS = Number(process.env.LEDGER_FUZZ_RUNS ?? 30);
// 20261126 with streaks, tournaments, dollars and referrals together: it reaches every case counted below
// (20261125, 20261127 and 20261128 agree too, but miss a streak's third day, a streak held or a denied_recently).
const SEED = Number(process.env.LEDGER_FUZZ_SEED ?? 20261126);
// `npm run fuzz:ledger -- --runs 1` failed on "expected 0 to be greater than 0", read as the ledgers
// disagreeing: the cases counted are reached by this seed, and near surely by 1,000 runs, not by a few.
const CHECKS_COVERAGE = (process.env.LEDGER_FUZZ_RUNS === undefined && process.env.LEDGER_FUZZ_SEED === undefined) || RUNS >= 1000;
const DAY = 86_400_000;

const ACHIEVEMENTS: Achievement[] = [
  { id: 'coin', title: 'Coin', sats: 10, repeat: { kind: 'cooldown', seconds: 0 } },
  { id: 'login', title: 'Login', sats: 20, repeat: { kind: 'daily' } },
  { id: 'boss', title: 'Boss', sats: 30, repeat: { kind: 'once' } },
  { id: 'marathon', title: 'Marathon', sats: 40, repeat: { kind: 'cooldown', seconds: 0 }, minPlaySeconds: 60 },
  { id: 'trophy', title: 'Trophy', sats: 25, repeat: { kind: 'cooldown', seconds: 3600 }, hold: true },
  // A login streak (issue 37): day 3 on is above the hold limit when there is one (30).
  { id: 'streak', title: 'Streak', sats: 10, repeat: { kind: 'streak', sats: [10, 20, 35] } },
  // Issue 38: priced in dollars, its sats decided at the BTC/USD price of the moment ('btc' steps change it).
  { id: 'gem', title: 'Gem', usd: 0.02, repeat: { kind: 'cooldown', seconds: 0 } },
];
const PLAYERS = 3;
/** Tournaments (issue 37): their prizes paid at once, or credited; the first above the hold threshold of 30. */
const TOURNAMENTS: TournamentCatalogEntry[] = [
  { id: 'cup', kind: 'tournament', title: 'Cup', prizes: [40, 20, 10] },
  { id: 'league', kind: 'tournament', title: 'League', prizes: [25, 15], payout: 'balance' },
];
/**
 * A referral program beside them (issue 37): qualified by the referee's next payment (or prize; the
 * play time is tested over HTTP, test/relay/referrals.test.ts); one referrer reward a day, above the hold limit of 30.
 */
const PROGRAM: ReferralProgram = { id: 'invite', kind: 'referral', title: 'Invite', referrerSats: 40, refereeSats: 15, afterPlaySeconds: 0, perReferrerDaily: 1 };
/** What no client claims again: a prize, a referral's reward. */
const PROGRAM_IDS = new Set([...TOURNAMENTS.map((t) => t.id), PROGRAM.id]);

type Op =
  /**
   * A key names its achievement (key % 5), unless `reuse`: the same key with another body.
   * `credit`: in balance mode, straight to the ledger (as the core's balance mode records it).
   */
  | { op: 'claim'; player: number; key: number; reuse: boolean; service: Service; credit: boolean }
  /**
   * A login streak's claim under a new key, as a game makes one each day it is played, `days`
   * UTC days after now (0: the same day again, or the player's last login sent again under its
   * key when an outage deferred it; 2: a day missed); `credit`: as `claim`'s.
   */
  | { op: 'login'; player: number; days: number; service: Service; credit: boolean }
  | { op: 'price'; achievement: number; sats: number }
  /** The BTC/USD price changes: dollar-priced claims decided from now on get other sats; decided ones keep theirs. */
  | { op: 'btc'; usd: number }
  | { op: 'wait'; ms: number }
  | { op: 'approve'; pick: number; service: Service }
  | { op: 'deny'; pick: number }
  /** The player claims again, under a new key, the achievement of the n-th reward rejected or held (after a denial, say). */
  | { op: 'again'; pick: number; service: Service }
  | { op: 'review'; pick: number; action: 'reconcile' | 'mark-paid' | 'mark-failed' }
  /** A withdrawal from the balance (sats absent: all that is withdrawable), to the ledger itself, paid by the core's payouts. */
  | { op: 'withdraw'; player: number; key: number; sats: number | undefined; service: Service }
  | { op: 'beat'; player: number }
  | { op: 'raise'; player: number; key: number; sats: number }
  /** The game's server posts a tournament's results for a period: players in ranking order (the first payment answered as `service` says). */
  | { op: 'tournament'; tournament: number; period: number; ranking: number[]; service: Service }
  /** A player links with another's referral code (or its own): its first link, or not. */
  | { op: 'refer'; referee: number; referrer: number };

const service: fc.Arbitrary<Service> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'pay' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'refuse' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'unavailable' as const }) },
  { weight: 1, arbitrary: fc.boolean().map((paid) => ({ kind: 'timeout' as const, paid })) },
  { weight: 1, arbitrary: fc.boolean().map((completes) => ({ kind: 'processing' as const, completes })) },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  // Keys from a small pool, so the same key comes again (a retry, a reused key, a deferred one due).
  {
    weight: 10,
    arbitrary: fc.record({
      op: fc.constant('claim' as const),
      player: fc.nat(PLAYERS - 1),
      key: fc.nat(9),
      reuse: fc.nat(15).map((n) => n === 0),
      service,
      credit: fc.boolean(),
    }),
  },
  // Mostly the first player, most often the next day, so streaks grow past their steps.
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('login' as const),
      player: fc.constantFrom(0, 0, 0, 1, 2),
      days: fc.constantFrom(0, 1, 1, 1, 2),
      service,
      credit: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('price' as const), achievement: fc.nat(ACHIEVEMENTS.length - 1), sats: fc.constantFrom(5, 10, 25, 40, 60) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('btc' as const), usd: fc.constantFrom(30_000, 65_000, 100_000.5, 250_000) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('wait' as const), ms: fc.constantFrom(1_000, 61_000, 3_600_000, 6 * 3_600_000, 20 * 3_600_000) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('approve' as const), pick: fc.nat(3), service }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('deny' as const), pick: fc.nat(3) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('again' as const), pick: fc.nat(3), service }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('withdraw' as const),
      player: fc.nat(PLAYERS - 1),
      key: fc.nat(4),
      sats: fc.constantFrom(undefined, undefined, 5, 10, 20, 60),
      service,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('beat' as const), player: fc.nat(PLAYERS - 1) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('refer' as const), referee: fc.nat(PLAYERS - 1), referrer: fc.nat(PLAYERS - 1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('raise' as const), player: fc.nat(PLAYERS - 1), key: fc.nat(2), sats: fc.constantFrom(10, 30) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('tournament' as const),
      tournament: fc.nat(TOURNAMENTS.length - 1),
      period: fc.nat(2),
      ranking: fc.shuffledSubarray([0, 1, 2], { minLength: 1 }),
      service,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('review' as const), pick: fc.nat(3), action: fc.constantFrom('reconcile' as const, 'mark-paid' as const, 'mark-failed' as const) }),
  },
);
const settings = fc.record({
  userDailyCapSats: fc.constantFrom(0, 50, 100),
  dailyBudgetSats: fc.constantFrom(0, 80, 200),
  // The dollar budget and cap (issue 38): each claim counts its dollar value at the price it was decided at.
  dailyBudgetUsd: fc.constantFrom(0, 0, 0.1, 0.25),
  userDailyCapUsd: fc.constantFrom(0, 0, 0.05, 0.12),
  holdAboveSats: fc.constantFrom(0, 30),
  denialCooldownHours: fc.constantFrom(0, 24),
  withdrawals: fc.record({
    minWithdrawalSats: fc.constantFrom(1, 5),
    dailyLimitSats: fc.constantFrom(0, 40),
    allowancePerPlayMinuteSats: fc.constantFrom(0, 10),
    allowanceStartSats: fc.constantFrom(20, 100),
  }),
});

/** The payments service, answering each payment as the step says; it records what it paid. */
function scriptedService() {
  let next: Service = { kind: 'pay' };
  const fates = new Map<string, { completes: boolean; sats: number; userId: string }>();
  const paid = new Map<string, number>();
  const pay = (userId: string, sats: number) => paid.set(userId, (paid.get(userId) ?? 0) + sats);
  let n = 0;
  const client = {
    gamertagByUserId: async (userId: string) => ({ kind: 'ok', data: { gamertag: userId } }),
    sendPayment: async ({ gamertag, amount }: { gamertag: string; amount: string }) => {
      const sats = Number(amount) / 1000;
      const s = next;
      next = { kind: 'pay' };
      const transactionId = `tx-${++n}`;
      switch (s.kind) {
        case 'pay':
          pay(gamertag, sats);
          return { kind: 'ok', data: { transactionId, status: 'settled', receiverId: gamertag } };
        case 'refuse':
          return { kind: 'refused', status: 400, message: 'nope' };
        case 'unavailable':
          return { kind: 'unavailable', reason: 'unreachable' };
        case 'timeout':
          if (s.paid) pay(gamertag, sats);
          return { kind: 'unclear', reason: 'timeout' };
        case 'processing':
          if (s.completes) pay(gamertag, sats);
          fates.set(transactionId, { completes: s.completes, sats, userId: gamertag });
          return { kind: 'ok', data: { transactionId, status: 'processing', receiverId: gamertag } };
      }
    },
    transaction: async (id: string) => ({ kind: 'ok', data: { status: fates.get(id)?.completes ? 'TRANSACTION_STATUS_COMPLETED' : 'TRANSACTION_STATUS_FAILED' } }),
  };
  // Only the calls a payout and a reconcile make.
  return { client: client as unknown as PaymentsClient, paid, answer: (s: Service) => void (next = s) };
}

/** The relay's core on a store, with a controlled clock and the scripted service. */
const logger = createLogger('silent');
function coreOn(store: RelayStore, limits: ClaimLimits, holdAboveSats: number, clock: () => number, btc: { usd: number }) {
  const service = scriptedService();
  // The price the core decides dollar claims at: the run's, as 'btc' steps set it.
  const prices = { forClaim: async () => ({ btcUsd: btc.usd }), forValue: async () => ({ btcUsd: btc.usd }) };
  // The relay's own wiring (createCore); repricing makes the core anew over the same store and service.
  const coreWith = (entries: Achievement[]) =>
    createCore({ store, payments: service.client, catalog: createCatalog([...entries, ...TOURNAMENTS, PROGRAM]), limits, logger, holdAboveSats, clock, prices });
  let core = coreWith(ACHIEVEMENTS);
  return {
    service,
    get payouts() {
      return core.payouts;
    },
    reviews: (id: string, action: ReviewAction, actor: string, transactionId?: string) => core.decide(id, action, actor, transactionId),
    reprice: (entries: Achievement[]) => (core = coreWith(entries)),
    get referrals() {
      return core.referrals!;
    },
    /** The results as the game's server posts them: created, the same again, or the refusal's code. */
    postResults: (tournamentId: string, period: string, ranking: string[]) =>
      core.postResults!(tournamentId, { period, ranking }, 'fuzz').then(
        (r) => (r.created ? 'created' : 'existing'),
        (err: { code?: string }) => {
          if (!err.code) throw err;
          return err.code === 'results_already_posted' ? 'other_results' : err.code;
        },
      ),
    claim: (player: { id: string; iat: number }, key: string, achievementId: string) =>
      core.claim({ userId: player.id, gamertag: player.id, iat: player.iat, exp: player.iat + DAY }, key, { achievementId }, new Request('http://relay/v1/rewards')),
  };
}

const stores: Record<string, RelayStore> = {};
beforeAll(async () => {
  stores.SQLite = openSqliteStore(join(mkdtempSync(join(tmpdir(), 'rewardbus-diff-')), 'ledger.sqlite'));
  await (stores.SQLite as RelayStore & { opened: Promise<void> }).opened;
  if (postgresUrl) stores.PostgreSQL = await openPgStore(await freshDatabase(postgresUrl, { migrated: true }), { owner: 'diff', leaseMs: 60_000 });
});
afterAll(async () => {
  await Promise.all(Object.values(stores).map((s) => s.close()));
});

let run = 0;
/** Claims the model refused as denied_recently, over every run: the sequences must reach it. */
let deniedRecently = 0;
/** Credits credited when claimed, and held ones approved: the sequences must reach both. */
const credited = { claimed: 0, approved: 0 };
/** The days login streaks reached, decided (not refused): the sequences must go past day 1, and start again. */
const streakDays = new Set<number>();
/** Streak days held for being above the hold limit (decided by the ledger, from the day's sats). */
let streakHeld = 0;
/** Keys claimed again after an approval an outage deferred: not held again (a streak's day among them, decided by the ledger), or held again at more sats. */
const approvedAgain = { any: 0, streak: 0, higher: 0 };
/** Withdrawals refused, and paid (or sent to be): the sequences must reach both. */
const withdrawn = { refused: 0, sent: 0 };
/** Tournaments' results recorded: the sequences must reach them. */
const posts = { created: 0 };
/** Price changes, and claims refused by a daily limit while counted in dollars: the sequences must reach both. */
let dollarSteps = 0;
let dollarRefusals = 0;
/** Referrals accepted at link, and (in the last step compared) qualified: the sequences must reach both. */
const referred = { pending: 0, qualified: 0 };

/** One sequence on every store and on the model, compared after each step. */
async function replay(limits: ClaimLimits & { holdAboveSats: number; withdrawals: Omit<WithdrawalLimits, 'holdAboveSats'> }, ops: Op[]) {
  const withdrawalLimits: WithdrawalLimits = { ...limits.withdrawals, holdAboveSats: limits.holdAboveSats };
  // Each run on days and players of its own: the stores are shared by every run.
  const start = Date.parse('2030-01-01T00:00:00Z') + run++ * 40 * DAY + 11 * 3_600_000;
  const ns = randomUUID().slice(0, 8);
  let now = start;
  const clock = () => now;
  const players = Array.from({ length: PLAYERS }, (_, i) => ({ id: `${ns}-p${i}`, iat: start }));
  const model = new LedgerModel(limits, limits.holdAboveSats);
  model.program = PROGRAM;
  const btc = { usd: 65_000 };
  const cores = Object.entries(stores).map(([name, store]) => ({ name, store, core: coreOn(store, limits, limits.holdAboveSats, clock, btc), ids: new Map<string, string>() }));
  let prices: Achievement[] = ACHIEVEMENTS.map((a) => ({ ...a }));
  // An achievement as a claim of it is decided now: its sats at the price, and its value when it has one (core/price.ts; a streak's from its day's sats, by the model).
  const priced = (a: Achievement): { entry: CatalogEntry; value: ClaimTerms['value'] } => {
    const btcUsd = a.usd !== undefined || countsDollars(limits) ? btc.usd : undefined;
    const { sats, terms } = satsAt(amountOf(a), btcUsd);
    return { entry: { ...a, sats }, value: terms.usd === undefined || btcUsd === undefined ? undefined : { usd: terms.usd, btcUsd } };
  };
  const days = new Set<string>();
  const keyOf = (player: number, key: number) => `${players[player]!.id}-k${key}`;
  // The n-th reward (oldest first) in a state, by key.
  const pickReward = (which: (r: ModelReward) => boolean, n: number) => {
    const found = [...model.rewards.values()].filter(which);
    return found.length ? found[n % found.length] : undefined;
  };
  const pick = (state: string, n: number) => pickReward((r) => r.state === state, n)?.key;
  let again = 0;
  // Linked with the relay: a tournament's ranking may name them.
  for (const c of cores) for (const p of players) await c.store.ledger.rememberPlayer!(p.id, p.id, start);
  let logins = 0;
  /** Each player's last login key: sent again while deferred (a client's retry). */
  const lastLogin = new Map<string, string>();

  for (const step of ops) {
    days.add(utcDay(now));
    model.at = now;
    // The step's answer for its first payment (a step without one: paid), as the model takes it: none left from an earlier step.
    for (const c of cores) c.core.service.answer('service' in step ? step.service : { kind: 'pay' });
    if (step.op === 'refer') {
      const [referee, referrer] = [players[step.referee]!.id, players[step.referrer]!.id];
      const want = model.link(referee, referrer, now);
      if (want === 'pending') referred.pending++;
      for (const c of cores) {
        const code = await c.core.referrals.code(referrer);
        expect({ store: c.name, answer: await c.core.referrals.atLink(referee, code, undefined, now) }).toEqual({ store: c.name, answer: want });
      }
      await expectSame(model, cores, players, days, now);
      continue;
    }
    if (step.op === 'wait') {
      now += step.ms;
      continue;
    }
    if (step.op === 'beat' || step.op === 'raise') {
      const player = players[step.player]!.id;
      const want = step.op === 'beat' ? model.beat(player, now, PLAY_BEAT_GAP_MS) : model.raise(player, `r${step.key}`, step.sats);
      for (const c of cores) {
        const l = c.store.ledger;
        const got =
          step.op === 'beat'
            ? await l.beat!(player, now, PLAY_BEAT_GAP_MS)
            : (await l.raiseAllowance!({ userId: player, idempotencyKey: `r${step.key}`, sats: step.sats, reason: 'fuzz' }, now)).created;
        expect({ store: c.name, got }).toEqual({ store: c.name, got: want });
      }
      await expectSame(model, cores, players, days, now);
      continue;
    }
    if (step.op === 'withdraw') {
      const player = players[step.player]!;
      const key = `${player.id}-w${step.key}`;
      const hash = `w:${step.sats ?? 'all'}`;
      const want = model.withdraw(player.id, key, step.sats, hash, now, withdrawalLimits, step.service);
      if (want.refusal) withdrawn.refused++;
      else if (want.state && want.state !== 'held') withdrawn.sent++;
      for (const c of cores) {
        c.core.service.answer(step.service);
        const w = { id: randomUUID(), userId: player.id, idempotencyKey: key, requestHash: hash, gamertag: player.id, ...(step.sats ? { sats: step.sats } : {}) };
        const got = await c.store.ledger.withdraw!(w, withdrawalLimits, now).catch((err: Error) => {
          if (err.name !== 'WithdrawalRefusal') throw err;
          return (err as WithdrawalRefusal).reason;
        });
        if (typeof got === 'string') {
          expect({ store: c.name, refusal: got }).toEqual({ store: c.name, refusal: want.refusal });
          continue;
        }
        c.ids.set(key, got.entry.id);
        if (got.kind === 'created' && got.entry.state === 'sending') await c.core.payouts.pay(got.entry, 'Withdrawal');
      }
      await expectSame(model, cores, players, days, now);
      continue;
    }
    if (step.op === 'tournament') {
      const t = TOURNAMENTS[step.tournament]!;
      // Periods of this run only: the stores are shared by every run.
      const period = `${ns}-${step.period}`;
      // One place at most whose prize may qualify a referral: the core pays the prizes at once, and two
      // qualifications under way together would decide the referrer's cap in either order.
      const qualifying = (i: number) => model.referrals.get(players[i]!.id)?.state === 'pending';
      const first = step.ranking.find(qualifying);
      const ranking = step.ranking.filter((i) => !qualifying(i) || i === first).map((i) => players[i]!.id);
      const toldBefore = new Map(players.map((p) => [p.id, model.events.get(p.id)?.length ?? 0]));
      const want = model.postTournament(t, period, ranking, now, step.service);
      if (want === 'created') posts.created++;
      for (const c of cores) {
        c.core.service.answer(step.service);
        const got = await c.core.postResults(t.id, period, ranking);
        expect({ store: c.name, got }).toEqual({ store: c.name, got: want });
        await c.core.payouts.drain();
        for (const [place] of ranking.slice(0, t.prizes.length).entries()) {
          const key = `tournament:${t.id}:${period}:${place + 1}`;
          const e = await c.store.ledger.find(ranking[place]!, key);
          if (e) c.ids.set(key, e.id);
        }
      }
      await expectSame(model, cores, players, days, now, toldBefore);
      continue;
    }
    if (step.op === 'btc') {
      btc.usd = step.usd;
      model.btcUsd = step.usd;
      dollarSteps++;
      continue;
    }
    if (step.op === 'price') {
      prices = prices.map((a, i) => (i === step.achievement ? repriced(a, step.sats) : a));
      for (const c of cores) c.core.reprice(prices);
      continue;
    }
    if (step.op === 'claim' || step.op === 'again' || step.op === 'login') {
      let player: { id: string; iat: number };
      let key: string;
      let achievement: Achievement;
      if (step.op === 'login') {
        now += step.days * DAY;
        days.add(utcDay(now));
        model.at = now;
        achievement = prices.find((x) => x.repeat.kind === 'streak')!;
        player = players[step.player]!;
        const last = lastLogin.get(player.id);
        key = step.days === 0 && last !== undefined && model.rewards.get(last)?.state === 'deferred' ? last : `${player.id}-login${logins++}`;
        lastLogin.set(player.id, key);
      } else if (step.op === 'claim') {
        achievement = prices[(step.key + (step.reuse ? 1 : 0)) % ACHIEVEMENTS.length]!;
        player = players[step.player]!;
        key = keyOf(step.player, step.key);
      } else {
        // A prize or a referral's reward is no achievement a player claims: never claimed again.
        const r = pickReward((x) => (x.state === 'rejected' || x.state === 'held') && !x.withdrawal && !PROGRAM_IDS.has(x.achievementId), step.pick);
        if (!r) continue;
        achievement = prices.find((x) => x.id === r.achievementId)!;
        player = players.find((p) => p.id === r.player)!;
        key = `${r.key}-again${again++}`;
      }
      const credit = step.op !== 'again' && step.credit;
      const { entry: a, value } = priced(achievement);
      const before = model.rewards.get(key);
      const wasApproved = before?.state === 'deferred' && before.approved === true;
      model.claim(player, key, a, a.id, now, step.service, { credit, ...(value ? { value } : {}) });
      if (value && /^(daily_budget|user_daily_cap)$/.test(model.rewards.get(key)?.reason ?? '')) dollarRefusals++;
      if (credit && model.rewards.get(key)?.state === 'credited') credited.claimed++;
      if (model.rewards.get(key)?.reason === 'denied_recently') deniedRecently++;
      const streak = model.rewards.get(key)?.streakDay;
      if (streak !== undefined && model.rewards.get(key)!.state !== 'rejected') streakDays.add(streak);
      if (streak !== undefined && model.rewards.get(key)!.state === 'held') streakHeld++;
      if (wasApproved && model.rewards.get(key)!.state === 'held') approvedAgain.higher++;
      else if (wasApproved && !['deferred', 'rejected'].includes(model.rewards.get(key)!.state)) {
        approvedAgain.any++;
        if (streak !== undefined) approvedAgain.streak++;
      }
      for (const c of cores) {
        if (credit) {
          const approved = await approvedSatsOf(c.store.ledger, player.id, key);
          c.ids.set(key, (await c.store.ledger.claim(creditClaim(player, key, a, limits.holdAboveSats, value, approved), limits, now)).entry.id);
          continue;
        }
        c.core.service.answer(step.service);
        const r = await c.core.claim(player, key, a.id);
        if (r.kind === 'answered') c.ids.set(key, r.entry.id);
      }
    } else {
      const key = step.op === 'review' ? pick('needs_review', step.pick) : pick('held', step.pick);
      if (!key) continue;
      // A held credit approved is credited (by the ledger itself: the core's balance mode is not here yet).
      if (step.op === 'approve' && model.rewards.get(key)!.credit) {
        if (model.approve(key, now, step.service) === 'settled') credited.approved++;
        for (const c of cores)
          await c.store.ledger.settle(c.ids.get(key)!, 'approve', { state: 'credited' }, { now, audit: { actor: 'fuzz', action: 'approve' }, limits }).catch((err: Error) => {
            if (err.name !== 'DayLimitRefusal') throw err;
          });
        await expectSame(model, cores, players, days, now);
        continue;
      }
      if (step.op === 'approve') model.approve(key, now, step.service);
      else if (step.op === 'deny') model.deny(key, now);
      else model.review(key, step.action);
      for (const c of cores) {
        // A referral's reward was made by the core itself: its id is the store's, found by its key.
        const id = c.ids.get(key) ?? (await c.store.ledger.find(model.rewards.get(key)!.player, key))!.id;
        if ('service' in step) c.core.service.answer(step.service);
        const action = step.op === 'review' ? step.action : step.op;
        await c.core.reviews(id, action, 'fuzz', action === 'mark-paid' ? 'tx-by-hand' : undefined);
      }
    }
    await expectSame(model, cores, players, days, now);
  }
}

/** An entry at a new price: a streak's steps from it (day 1 at the price, then twice and thrice it); a dollar-priced one in dollars (a thousandth of the sats drawn). */
const repriced = (a: Achievement, sats: number): Achievement =>
  a.usd !== undefined ? { ...a, usd: sats / 1000 } : a.repeat.kind === 'streak' ? { ...a, sats, repeat: { kind: 'streak', sats: [sats, 2 * sats, 3 * sats] } } : { ...a, sats };

/** A claim in balance mode, as the core would make it (its request hash: core/claims.ts's, of a body with only the achievement). */
const creditClaim = (
  player: { id: string; iat: number },
  key: string,
  a: CatalogEntry,
  holdAboveSats: number,
  value: ClaimTerms['value'],
  approvedSats: number | undefined,
): NewClaim => ({
  id: randomUUID(),
  userId: player.id,
  idempotencyKey: key,
  requestHash: createHash('sha256').update(`${a.id}\n`).digest('base64url'),
  achievementId: a.id,
  gamertag: player.id,
  sats: a.sats,
  repeat: a.repeat,
  ...(a.minPlaySeconds ? { minPlayMs: a.minPlaySeconds * 1000, playStartedAt: player.iat } : {}),
  // A streak's sats are the ledger's to decide: it holds them above the limit, or as the catalog
  // does, unless an approval an outage deferred covers them (approvalCovers, for any other claim here).
  ...(a.repeat.kind === 'streak'
    ? { ...(a.hold ? { hold: true } : {}), ...(holdAboveSats > 0 ? { holdAboveSats } : {}), ...(approvedSats !== undefined ? { approvedSats } : {}) }
    : (a.hold || (holdAboveSats > 0 && a.sats > holdAboveSats)) && !approvalCovers(approvedSats, a.sats)
      ? { hold: true }
      : {}),
  credit: true,
  // Valued at the price (a streak's from its day's sats, by the ledger).
  ...(value ? { terms: value } : {}),
});

type Cores = Array<{ name: string; store: RelayStore; ids: Map<string, string>; core: ReturnType<typeof coreOn> }>;
/**
 * `toldBefore`: each player's events before a step whose payments run at once (a tournament's
 * prizes, and the referral they qualify): that step's events are compared in any order.
 */
async function expectSame(model: LedgerModel, cores: Cores, players: Array<{ id: string }>, days: Set<string>, now: number, toldBefore?: Map<string, number>) {
  const inStepOrder = (player: string, list: unknown[][]) => {
    const n = toldBefore?.get(player) ?? list.length;
    return [...list.slice(0, n), ...list.slice(n).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))];
  };
  // A payment's referral qualification runs after its commit: its rewards are compared once it is done.
  for (const c of cores) await c.core.referrals.idle();
  referred.qualified = Math.max(referred.qualified, [...model.referrals.values()].filter((r) => r.state === 'qualified').length);
  const want = {
    rewards: Object.fromEntries([...model.rewards.values()].map((r) => [r.key, [r.state, r.sats, r.reason ?? null, r.day, r.usd ?? null]])),
    budget: Object.fromEntries([...days].map((d) => [d, model.budgetUsed(d)])),
    budgetUsd: Object.fromEntries([...days].map((d) => [d, model.budgetUsedUsd(d)])),
    events: Object.fromEntries(
      players.map((p) => [
        p.id,
        inStepOrder(
          p.id,
          (model.events.get(p.id) ?? []).map((e) => [e.key, e.status, e.sats, e.reason ?? null, e.kind ?? null]),
        ),
      ]),
    ),
    paid: Object.fromEntries(players.map((p) => [p.id, model.paid.get(p.id) ?? 0])),
    balance: Object.fromEntries(players.map((p) => [p.id, model.balance(p.id, now)])),
    streakDays: Object.fromEntries([...model.rewards.values()].flatMap((r) => (r.streakDay === undefined ? [] : [[r.key, r.streakDay]]))),
  };
  for (const c of cores) {
    const rewards: Record<string, unknown> = {};
    const streakDays: Record<string, number> = {};
    for (const p of players)
      for (const e of await c.store.ledger.history(p.id, 1000)) {
        rewards[e.idempotencyKey] = [e.state, e.sats, e.state === 'sending' ? null : (e.reason ?? null), e.day, e.terms?.usd ?? null];
        if (e.terms?.streakDay !== undefined) streakDays[e.idempotencyKey] = e.terms.streakDay;
      }
    const events: Record<string, unknown> = {};
    for (const p of players)
      events[p.id] = inStepOrder(
        p.id,
        (await c.store.events.since(p.id, 0, 10_000)).map((e) => {
          const r = e.data as RewardRecord;
          return [r.idempotencyKey, r.status, r.sats, r.reason ?? null, r.kind ?? null];
        }),
      );
    const budget = Object.fromEntries(await Promise.all([...days].map(async (d) => [d, await c.store.ledger.budgetUsed(d)])));
    const budgetUsd = Object.fromEntries(await Promise.all([...days].map(async (d) => [d, await c.store.ledger.budgetUsedUsd!(d)])));
    const paid = Object.fromEntries(players.map((p) => [p.id, c.core.service.paid.get(p.id) ?? 0]));
    const balance = Object.fromEntries(await Promise.all(players.map(async (p) => [p.id, await c.store.ledger.balance!(p.id, now)])));
    expect({ store: c.name, rewards, budget, budgetUsd, events, paid, balance, streakDays }).toEqual({ store: c.name, ...want });
  }
}

describe('the ledgers against the reference model', () => {
  it(`decide every sequence alike: ${RUNS} runs, seed ${SEED}`, { timeout: Math.max(120_000, RUNS * 4_000) }, async () => {
    await fc.assert(
      fc.asyncProperty(settings, fc.array(op, { minLength: 5, maxLength: 40, size: 'medium' }), (limits, ops) => replay(limits, ops)),
      { numRuns: RUNS, seed: SEED, endOnFailure: process.env.LEDGER_FUZZ_SHRINK === '0', verbose: 1 },
    );
    if (!CHECKS_COVERAGE) {
      console.log(`fuzz:ledger: the ledgers agreed over ${RUNS} runs (too few to check that every kind of step was reached)`);
      return;
    }
    expect(deniedRecently).toBeGreaterThan(0);
    expect(credited.claimed).toBeGreaterThan(0);
    expect(credited.approved).toBeGreaterThan(0);
    expect(withdrawn.refused).toBeGreaterThan(0);
    expect(withdrawn.sent).toBeGreaterThan(0);
    expect(posts.created).toBeGreaterThan(0);
    expect([...streakDays].sort()).toEqual(expect.arrayContaining([1, 2, 3]));
    expect(streakHeld).toBeGreaterThan(0);
    expect(dollarSteps).toBeGreaterThan(0);
    expect(dollarRefusals).toBeGreaterThan(0);
    expect(referred.pending).toBeGreaterThan(0);
    expect(referred.qualified).toBeGreaterThan(0);
  });

  // Rarely drawn at random: an approval the service's outage deferred, its key claimed again (a
  // login streak's day, which the ledger holds, and a plain claim), at the sats approved and above.
  it('decide alike an approval an outage deferred, claimed again under its key', async () => {
    const down = { kind: 'unavailable' as const };
    const pay = { kind: 'pay' as const };
    const login = (player: number, days: number): Op => ({ op: 'login', player, days, service: pay, credit: false });
    const before = { ...approvedAgain };
    await replay(
      {
        userDailyCapSats: 0,
        dailyBudgetSats: 0,
        holdAboveSats: 30,
        withdrawals: { minWithdrawalSats: 1, dailyLimitSats: 0, allowancePerPlayMinuteSats: 0, allowanceStartSats: 100 },
      },
      [
        // Two players' streaks to day 3 (35 sats, above the hold of 30): both held, both approved while the service is down.
        login(0, 0),
        login(1, 0),
        login(0, 1),
        login(1, 0),
        login(0, 1),
        login(1, 0),
        { op: 'approve', pick: 0, service: down },
        { op: 'approve', pick: 0, service: down },
        // The first sent again: the 35 sats approved go out.
        login(0, 0),
        // The steps are now 25, 50, 75: the second's day 3 is 75, more than approved, and held again.
        { op: 'price', achievement: 5, sats: 25 },
        login(1, 0),
        // A trophy (held by the catalog), approved while the service is down, then claimed again: paid.
        { op: 'claim', player: 2, key: 4, reuse: false, service: pay, credit: false },
        { op: 'approve', pick: 1, service: down },
        { op: 'claim', player: 2, key: 4, reuse: false, service: pay, credit: false },
      ],
    );
    expect(approvedAgain).toEqual({ any: before.any + 2, streak: before.streak + 1, higher: before.higher + 1 });
  });
});
