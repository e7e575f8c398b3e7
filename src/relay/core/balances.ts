import { createHash } from 'node:crypto';
import { nextUtcDay } from '../../wire/earning-rules.js';
import type { BalanceView, WithdrawalRequest, WithdrawalStatus, WithdrawalView } from '../../wire/relay-api.js';
import { STATES } from './lifecycle.js';
import type { Payouts } from './payouts.js';
import type { PlayerClaims } from './player-tokens.js';
import { type BalanceFacts, type Ledger, type LedgerEntry, type WithdrawalLimits, WithdrawalRefusal } from './ports/ledger.js';
import type { Settlements } from './settlements.js';
import { uuid7 } from './uuid7.js';
import { balanceNow, PLAY_BEAT_GAP_MS } from './withdrawal-decision.js';

/** How a withdrawal ended, for the route to answer. */
export type WithdrawOutcome =
  | { kind: 'answered'; entry: LedgerEntry; replayed: boolean }
  | { kind: 'refused'; reason: WithdrawalRefusal['reason'] | 'gamertag_required'; balance?: BalanceView }
  | { kind: 'key_reused' }
  | { kind: 'in_flight' }
  /** Nothing was paid and the service was out of reach: the balance is whole again; the same key asks again. */
  | { kind: 'deferred' };

export interface BalancesDeps {
  ledger: Ledger;
  settlements: Settlements;
  payouts: Payouts;
  limits: WithdrawalLimits;
}

/** The title a withdrawal's payment carries (with its id) in the service's records, approved by an operator or not. */
export const WITHDRAWAL_TITLE = 'Withdrawal';

const requestHash = (w: WithdrawalRequest) =>
  createHash('sha256')
    .update(`withdrawal\n${w.sats ?? 'all'}`)
    .digest('base64url');

/** A withdrawal entry as the player sees it. */
export function toWithdrawalView(e: LedgerEntry): WithdrawalView {
  const status = STATES[e.state].status;
  return {
    id: e.id,
    sats: e.sats,
    // A withdrawal is never credited or rejected: denied by an operator, it failed (and the balance is whole).
    status: (status === 'rejected' ? 'failed' : status) as WithdrawalStatus,
    ...(e.reason && e.state !== 'sending' ? { reason: e.reason } : {}),
    ...(e.paymentId ? { paymentId: e.paymentId } : {}),
    createdAt: new Date(e.createdAt).toISOString(),
    ...(e.settledAt ? { settledAt: new Date(e.settledAt).toISOString() } : {}),
  };
}

/**
 * Balance mode's use cases: the player's balance, withdrawals from it (one payment each, through
 * the same phases as a payout: debited and committed before the service is called), witnessed
 * play and the game server's raises of the withdrawal allowance.
 */
export function createBalances({ ledger, settlements, payouts, limits }: BalancesDeps) {
  const facts = (userId: string, now: number): Promise<BalanceFacts> => {
    if (!ledger.balance) throw new Error('this ledger keeps no balances: balance mode needs the SQLite or PostgreSQL store');
    return ledger.balance(userId, now);
  };

  function viewOf(f: BalanceFacts, now: number): BalanceView {
    const b = balanceNow(f, limits);
    return {
      sats: b.sats,
      withdrawableSats: Number.isFinite(b.withdrawableSats) ? b.withdrawableSats : b.sats,
      minWithdrawalSats: limits.minWithdrawalSats,
      withdrawnTodaySats: b.withdrawnTodaySats,
      resetsAt: new Date(nextUtcDay(now)).toISOString(),
    };
  }

  async function balance(userId: string): Promise<BalanceView> {
    const now = Date.now();
    return viewOf(await facts(userId, now), now);
  }

  /** `address`: the client's, as the relay resolved it. */
  async function withdraw(player: PlayerClaims, key: string, body: WithdrawalRequest, address?: string): Promise<WithdrawOutcome> {
    if (!player.gamertag) return { kind: 'refused', reason: 'gamertag_required' };
    const hash = requestHash(body);
    let result: Awaited<ReturnType<Settlements['withdraw']>>;
    try {
      result = await settlements.withdraw(
        {
          id: uuid7(),
          userId: player.userId,
          idempotencyKey: key,
          requestHash: hash,
          gamertag: player.gamertag,
          ...(body.sats !== undefined ? { sats: body.sats } : {}),
          ...(address !== undefined ? { address } : {}),
        },
        limits,
      );
    } catch (err) {
      if (err instanceof WithdrawalRefusal) return { kind: 'refused', reason: err.reason, balance: viewOf(err.facts, Date.now()) };
      throw err;
    }
    if (result.kind === 'existing') {
      const e = result.entry;
      if (e.requestHash !== hash || e.kind !== 'withdrawal') return { kind: 'key_reused' };
      if (e.state === 'sending') return { kind: 'in_flight' };
      return e.state === 'deferred' ? { kind: 'deferred' } : { kind: 'answered', entry: e, replayed: true };
    }
    const entry = result.entry.state === 'sending' ? await payouts.pay(result.entry, WITHDRAWAL_TITLE) : result.entry;
    return entry.state === 'deferred' ? { kind: 'deferred' } : { kind: 'answered', entry, replayed: false };
  }

  /** The player's withdrawals, newest first (read by themselves: a season of credits after them hides none). */
  async function withdrawals(userId: string, limit = 50): Promise<WithdrawalView[]> {
    if (!ledger.withdrawals) throw new Error('this ledger keeps no balances: balance mode needs the SQLite or PostgreSQL store');
    return (await ledger.withdrawals(userId, limit)).map(toWithdrawalView);
  }

  /** Witnessed play: a heartbeat from the player's visible game. Returns the play time, ms. */
  async function beat(userId: string): Promise<number> {
    if (!ledger.beat) throw new Error('this ledger keeps no play time');
    return ledger.beat(userId, Date.now(), PLAY_BEAT_GAP_MS);
  }

  /**
   * The game's server raises a player's withdrawal allowance (a validated purchase, an ad view):
   * once per key. The same key again is a replay only with the same raise; with another, `key_reused`.
   */
  async function raise(userId: string, key: string, sats: number, reason: string): Promise<'created' | 'replayed' | 'key_reused'> {
    if (!ledger.raiseAllowance) throw new Error('this ledger keeps no allowance');
    const r = await ledger.raiseAllowance({ userId, idempotencyKey: key, sats, reason }, Date.now());
    if (r.created) return 'created';
    return r.sats === sats && r.reason === reason ? 'replayed' : 'key_reused';
  }

  return { balance, withdraw, withdrawals, beat, raise };
}

export type Balances = ReturnType<typeof createBalances>;
