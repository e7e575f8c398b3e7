import type { Logger } from 'pino';
import type { PayoutMode } from '../../wire/relay-api.js';
import type { PaymentsClient } from '../payments/client.js';
import { createBalances, WITHDRAWAL_TITLE } from './balances.js';
import { achievementsOf, type Catalog, referralPrograms } from './catalog.js';
import { createClaims, type VerifyClaim } from './claims.js';
import { createGuests } from './guests.js';
import { createPayouts, type WalletWatch } from './payouts.js';
import type { PlayerTokens } from './player-tokens.js';
import { createPlayers, type Players, type VerifyLink } from './players.js';
import type { PlayerEvent } from './ports/event-log.js';
import type { ClaimLimits, LedgerEntry, WithdrawalLimits } from './ports/ledger.js';
import type { RelayStore } from './ports/relay-store.js';
import type { Prices } from './prices.js';
import { createPrizeRedelivery } from './prize-redelivery.js';
import { createRamp } from './ramp.js';
import { createReferrals, type ReferralMetrics, type Referrals } from './referrals.js';
import { Refusal } from './refusal.js';
import { createReports } from './reports.js';
import { createReviews } from './reviews.js';
import { createSettlements, type SettlementMetrics } from './settlements.js';
import { createTournaments } from './tournaments.js';
import { createWithdrawalRequests } from './withdrawal-requests.js';

const NO_SETTLEMENT_METRICS: SettlementMetrics = { settled: () => undefined };

/** What the core is made of: the store, the service, the catalog and the limits, and the hooks and settings its use cases read. */
export interface CoreDeps {
  store: Pick<RelayStore, 'ledger' | 'events' | 'referrals'>;
  /**
   * The payments service (instrumented or not). Without it (the review command with no API key)
   * nothing can be paid: approving a held claim is refused before anything changes, and a use
   * case that calls the service throws.
   */
  payments?: PaymentsClient | undefined;
  catalog: Catalog;
  limits: ClaimLimits;
  logger: Logger;
  /** Signs player tokens at link. Without it, no player can link (the review command links none). */
  tokens?: PlayerTokens | undefined;
  /** Live delivery to this relay's streams, after each commit. Default: none (the event is in the store for the relays to deliver). */
  publish?: ((event: PlayerEvent) => void) | undefined;
  metrics?: SettlementMetrics | undefined;
  /** /metrics' count of referrals by outcome. */
  referralMetrics?: ReferralMetrics | undefined;
  /** Told at once when the service refuses a payment for the wallet's balance. */
  wallet?: WalletWatch | undefined;
  verifyClaim?: VerifyClaim | undefined;
  /** RELAY_GAME_SERVER_SECRET, as a list: what unlock proofs are checked against. */
  gameServerSecrets?: readonly string[] | undefined;
  holdAboveSats?: number | undefined;
  verifyLink?: VerifyLink | undefined;
  linksPerAddressPerDay?: number | undefined;
  /** The relay's address as the service reaches it, without a trailing slash (ramp sessions' webhooks). */
  publicUrl?: string | undefined;
  /** The core's clock (a test's controlled one); by default a claim's time is the store's (core/settlements.ts). */
  clock?: (() => number) | undefined;
  /** RELAY_PAYOUT_MODE: `balance` credits claims to the player's balance (an achievement's own `payout` wins). Default instant. */
  payoutMode?: PayoutMode | undefined;
  /** The BTC/USD price holder (core/prices.ts): when the catalog or a budget is in dollars. */
  prices?: (Pick<Prices, 'forClaim' | 'forValue'> & Partial<Pick<Prices, 'peek'>>) | undefined;
  /** Balance mode's withdrawal limits (RELAY_MIN_WITHDRAWAL_SATS, …); hold: RELAY_HOLD_ABOVE_SATS. */
  withdrawals?: Omit<WithdrawalLimits, 'holdAboveSats'> | undefined;
}

/** Without limits given (a test's core): any withdrawal of at least a sat, no daily limit, no allowance. The relay passes its settings'. */
const NO_WITHDRAWAL_LIMITS: Omit<WithdrawalLimits, 'holdAboveSats'> = { minWithdrawalSats: 1, dailyLimitSats: 0, allowancePerPlayMinuteSats: 0, allowanceStartSats: 0 };

/** A service that is not there: a call to it is a mistake of the caller's, never an answer to settle by. */
const unconfigured = (call: string) => () => Promise.reject(new Error(`no payments service is configured (${call})`));
const NO_SERVICE: PaymentsClient = {
  sendPayment: unconfigured('sendPayment'),
  userIdByGamertag: unconfigured('userIdByGamertag'),
  gamertagByUserId: unconfigured('gamertagByUserId'),
  transaction: unconfigured('transaction'),
  withdrawalRequest: unconfigured('withdrawalRequest'),
  rampWidget: unconfigured('rampWidget'),
  wallet: unconfigured('wallet'),
  btcUsd: unconfigured('btcUsd'),
  close: () => undefined,
};

/**
 * The relay's core, wired once: every use case over one store, one service and one settlement
 * gate, for the relay (relay.ts) and the review command alike. A use case more is one more member.
 */
export function createCore(deps: CoreDeps) {
  const { store, catalog, limits, logger } = deps;
  const { ledger, events } = store;
  const payments = deps.payments ?? NO_SERVICE;
  // Referral programs (issue 37): with none in the catalog, no claim or settlement does anything more.
  const programs = referralPrograms(catalog);
  let referrals: Referrals | undefined;
  const settlements = createSettlements({
    ledger,
    publish: deps.publish ?? (() => undefined),
    metrics: deps.metrics ?? NO_SETTLEMENT_METRICS,
    logger,
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(programs.length && store.referrals ? { onFinal: (entry: LedgerEntry) => void referrals?.settled(entry) } : {}),
  });
  const payouts = createPayouts(ledger, settlements, payments, logger, deps.wallet);
  // The payment's description: an achievement's title, or a program's (an approved prize, a held referral reward), or a withdrawal's.
  const title = ({ achievementId: id, kind }: LedgerEntry) =>
    kind === 'withdrawal' ? WITHDRAWAL_TITLE : ((catalog.get(id) ?? catalog.tournaments?.get(id) ?? catalog.referrals?.get(id))?.title ?? id);
  const payApproved = deps.payments ? (entry: LedgerEntry) => payouts.pay(entry, title(entry)) : undefined;
  const tokens = deps.tokens;
  const payoutMode = deps.payoutMode ?? 'instant';
  // Balance mode is on for the relay, or for one achievement: then guests are. Balances and
  // withdrawals are on whenever anything credits one: a tournament paid to the balance too, or
  // its winners could never see nor withdraw their prizes.
  const guestPlay = payoutMode === 'balance' || achievementsOf(catalog).some((a) => a.payout === 'balance');
  const balanceMode = guestPlay || [...(catalog.tournaments?.values() ?? [])].some((t) => t.payout === 'balance');
  const holdAboveSats = deps.holdAboveSats ?? 0;
  referrals = store.referrals
    ? createReferrals({
        store: store.referrals,
        ledger,
        settlements,
        payouts,
        programs,
        limits,
        holdAboveSats,
        payoutMode,
        logger,
        metrics: deps.referralMetrics,
        clock: deps.clock,
        prices: deps.prices,
      })
    : undefined;
  const balances = balanceMode ? createBalances({ ledger, settlements, payouts, limits: { ...NO_WITHDRAWAL_LIMITS, ...deps.withdrawals, holdAboveSats } }) : undefined;
  const guests =
    guestPlay && tokens ? createGuests({ settlements, tokens, catalog, limits, mergedInto: (id) => ledger.mergedInto?.(id) ?? Promise.resolve(undefined) }) : undefined;
  const players: Players = tokens
    ? createPlayers({ payments, tokens, ledger, verifyLink: deps.verifyLink, linksPerAddressPerDay: deps.linksPerAddressPerDay ?? 0, logger, guests, referrals })
    : { link: () => Promise.reject(new Error('linking players needs player tokens')) };
  return {
    settlements,
    payouts,
    /** A ledger entry as the client sees it (the record its event carried, when it has one). */
    recordOf: settlements.recordOf,
    /** A claim: at most one payment per intent (core/claims.ts). */
    claim: createClaims({
      ledger,
      settlements,
      catalog,
      payouts,
      limits,
      verifyClaim: deps.verifyClaim,
      gameServerSecrets: deps.gameServerSecrets ?? [],
      holdAboveSats,
      payoutMode,
      prices: deps.prices,
      ...(programs.length && referrals ? { seen: referrals.seen } : {}),
      ...(guests ? { guestClaimed: guests.claimed } : {}),
    }),
    /** An operator's decision on an intent in review or held (core/reviews.ts). */
    decide: createReviews(settlements, ledger.get, payouts.settleByStatus, payApproved, limits),
    /** A gamertag linked: its session, or a Refusal (core/players.ts). */
    link: players.link,
    openRampSession: createRamp({ payments, events, publicUrl: deps.publicUrl, logger }),
    withdrawalRequest: createWithdrawalRequests(payments),
    reports: createReports(ledger, limits, balanceMode, deps.prices?.peek),
    /** Balance mode's balances and withdrawals (core/balances.ts); undefined when it is off. */
    balances,
    /** Referral codes, qualification and the sweep (core/referrals.ts); undefined on a store without their tables. */
    referrals,
    /** Balance mode's guests (core/guests.ts); undefined when it is off. */
    guests,
    /** The game's server posts a tournament's results (core/tournaments.ts); undefined when the catalog has no tournament. */
    postResults: catalog.tournaments?.size
      ? createTournaments({ ledger, settlements, catalog, payouts, limits, logger, holdAboveSats, payoutMode, prices: deps.prices, guests })
      : undefined,
    /** Deferred prizes sent again by the relay (core/prize-redelivery.ts); undefined when the catalog has no tournament. */
    redeliverPrizes: catalog.tournaments?.size ? createPrizeRedelivery({ ledger, settlements, payouts, catalog, limits, logger, holdAboveSats, payoutMode }) : undefined,
    /** A gamertag's userId as the service says it (the game's server may name a player so); undefined when it knows none. */
    async userIdOf(gamertag: string): Promise<string | undefined> {
      const r = await payments.userIdByGamertag(gamertag);
      if (r.kind === 'ok') return r.data.id;
      if (r.kind === 'refused' && (r.status === 400 || r.status === 404)) return undefined;
      throw new Refusal('service_unavailable', undefined, 5);
    },
    limits,
    catalog,
  };
}

export type Core = ReturnType<typeof createCore>;
