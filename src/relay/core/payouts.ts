import type { Logger } from 'pino';
import { DESCRIPTION_MAX_LENGTH, MESSAGES, msatsFromSats, type SendPaymentData } from '../../contract/payments-api.js';
import type { Outcome, PaymentsClient } from '../payments/client.js';
import type { AuditNote, Ledger, LedgerEntry, Settlement } from '../store/ledger.js';
import type { Settlements } from './settlements.js';

/** Told at once when the service refuses a payment for the project wallet's balance (ops/wallet-balance.ts). */
export interface WalletWatch {
  noteInsufficientBalance(): void;
}
const NO_WALLET_WATCH: WalletWatch = { noteInsufficientBalance: () => undefined };

/**
 * Pays committed intents through the service and settles them through the settlement core. A
 * payment is sent once per intent: an unclear answer becomes needs_review and is settled through
 * the payment-status endpoint, a late answer or an operator, never by sending again.
 */
export function createPayouts(ledger: Ledger, settlements: Settlements, payments: PaymentsClient, logger: Logger, wallet: WalletWatch = NO_WALLET_WATCH) {
  /**
   * Payments go to a gamertag, but a player can rename and someone else take the old name within
   * a second: the userId's gamertag is looked up right before each payment, never cached.
   */
  async function currentGamertag(userId: string): Promise<Settlement | string> {
    const r = await payments.gamertagByUserId(userId);
    if (r.kind === 'ok') return r.data.gamertag;
    if (r.kind === 'refused' && r.status < 500 && r.status !== 401 && r.status !== 403) return { state: 'failed', reason: 'unknown_user' };
    return { state: 'deferred', reason: r.kind === 'refused' ? `service_refused_${r.status}` : r.reason };
  }

  /** The settlement a payment's answer means for the entry it paid. */
  function settlementOf(entry: LedgerEntry, r: Outcome<SendPaymentData>, gamertag?: string): Settlement | undefined {
    const to = gamertag ? { gamertag } : {};
    switch (r.kind) {
      case 'ok':
        if (r.data.receiverId && r.data.receiverId !== entry.userId) {
          logger.error({ event: 'receiver_mismatch', rewardId: entry.id, userId: entry.userId, receiverId: r.data.receiverId });
          return { state: 'needs_review', reason: 'receiver_mismatch', paymentId: r.data.transactionId, ...to };
        }
        return r.data.status === 'settled'
          ? { state: 'paid', paymentId: r.data.transactionId, ...to }
          : { state: 'needs_review', reason: `payment_${r.data.status}`, paymentId: r.data.transactionId, ...to };
      case 'refused':
        if (r.status === 401 || r.status === 403) {
          logger.error({ event: 'service_refused_key', status: r.status, message: r.message }, 'the payments service refused the API key');
          return { state: 'deferred', reason: `service_refused_${r.status}` };
        }
        if (r.message === MESSAGES.noUser) return { state: 'failed', reason: 'unknown_gamertag', ...to };
        if (r.message === MESSAGES.insufficientBalance) {
          wallet.noteInsufficientBalance();
          return { state: 'failed', reason: 'insufficient_balance', ...to };
        }
        return { state: 'failed', reason: 'payment_refused', ...to };
      case 'unavailable':
        return { state: 'deferred', reason: r.reason };
      case 'unclear':
        return gamertag === undefined ? undefined : { state: 'needs_review', reason: r.reason, ...to };
    }
  }

  async function send(entry: LedgerEntry, title: string, onLate: (late: Promise<Outcome<SendPaymentData>>) => void): Promise<Settlement> {
    const gamertag = await currentGamertag(entry.userId);
    if (typeof gamertag !== 'string') return gamertag;
    // The recovery point: committed before the request leaves. A crash before it means nothing
    // reached the service (the intent is sent again); after it, the payment may have.
    if (!(await ledger.markSent(entry.id))) return { state: 'needs_review', reason: 'lost_claim' };
    // The intent id travels in the description so an operator can find the payment upstream.
    const description = `${title} (rewardbus ${entry.id})`.slice(0, DESCRIPTION_MAX_LENGTH);
    const r = await payments.sendPayment({ gamertag, amount: msatsFromSats(entry.sats), description });
    if (r.kind === 'unclear' && r.late) onLate(r.late);
    return settlementOf(entry, r, gamertag)!;
  }

  /**
   * A payment whose answer came after the timeout: it settles the review it went to (the
   * compare-and-set is the ledger's, so an operator's decision meanwhile stands).
   */
  async function settleLate(entry: LedgerEntry, late: Promise<Outcome<SendPaymentData>>) {
    const r = await late;
    const to = r.kind === 'ok' || r.kind === 'refused' ? settlementOf(entry, r) : undefined;
    if (!to || to.state === 'deferred') return;
    await settlements.settle(entry.id, { from: ['needs_review'], to, cause: 'late_answer' });
  }

  const inFlight = new Set<Promise<LedgerEntry>>();

  /** Pays a `sending` entry and records how it ended. */
  function pay(entry: LedgerEntry, title: string): Promise<LedgerEntry> {
    const p = payAndSettle(entry, title).finally(() => inFlight.delete(p));
    inFlight.add(p);
    return p;
  }

  async function payAndSettle(entry: LedgerEntry, title: string): Promise<LedgerEntry> {
    let late: Promise<Outcome<SendPaymentData>> | undefined;
    const to = await send(entry, title, (l) => (late = l));
    const settled = (await settlements.settle(entry.id, { from: ['sending'], to, cause: 'payout' })) ?? (await ledger.get(entry.id)) ?? entry;
    // Listened to only once the review it settles is committed.
    if (late) void settleLate(entry, late).catch((err: unknown) => logger.error({ err, rewardId: entry.id }, 'late answer not recorded'));
    return settled;
  }

  /**
   * Asks the payment-status endpoint about one needs_review entry with a transaction id, and
   * settles it when the service says how it ended. Returns the settled entry, or undefined.
   */
  async function settleByStatus(entry: LedgerEntry, audit?: AuditNote): Promise<LedgerEntry | undefined> {
    if (!entry.paymentId) return undefined;
    const r = await payments.transaction(entry.paymentId);
    if (r.kind !== 'ok' || r.data.status === 'TRANSACTION_STATUS_PENDING') return undefined;
    const to: Settlement = r.data.status === 'TRANSACTION_STATUS_COMPLETED' ? { state: 'paid', paymentId: entry.paymentId } : { state: 'failed', reason: 'payment_failed' };
    return settlements.settle(entry.id, { from: ['needs_review'], to, cause: 'reconcile', ...(audit ? { audit } : {}) });
  }

  /** Settles needs_review entries whose transaction id is known, through the payment-status endpoint. */
  async function reconcile(): Promise<{ settled: number; open: number }> {
    const open = await ledger.inState('needs_review');
    let settled = 0;
    for (const entry of open) if (await settleByStatus(entry)) settled++;
    return { settled, open: open.length - settled };
  }

  /**
   * After a crash: an intent caught before its payment left goes back to be sent (deferred: the
   * client's retry with the same key claims it again); one caught after may have been paid, so
   * it goes to review, never out again. Returns how many went to review.
   */
  async function recover(startedAt: number): Promise<number> {
    let n = 0;
    for (const entry of await ledger.abandoned(Date.now(), startedAt)) {
      // Both moves are the ledger's compare-and-sets: a relay still at work on it wins.
      if (entry.phase === 'claimed' && (await settlements.releaseUnsent(entry.id))) continue;
      if (await settlements.settle(entry.id, { from: ['sending'], to: { state: 'needs_review', reason: 'interrupted' }, cause: 'recovery' })) n++;
    }
    return n;
  }

  /** Waits for payments in flight to be settled (each ends by the client's timeout at the latest). */
  async function drain(): Promise<void> {
    await Promise.allSettled([...inFlight]);
  }

  return { pay, reconcile, settleByStatus, recover, drain };
}

export type Payouts = ReturnType<typeof createPayouts>;
