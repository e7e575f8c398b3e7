import { type GamertagData, MESSAGES, type SendPaymentData, TRANSACTION_STATUSES, type TransactionData } from '../../contract/payments-api.js';
import type { Outcome } from '../payments/client.js';
import type { Settlement } from './ports/ledger.js';

// What the payments service's answers mean for a reward, and nothing else: pure functions, so
// every kind of answer is tested directly (test/unit/relay/core/payout-outcome.test.ts). What is
// logged or counted because of an answer is the caller's (core/payouts.ts).

/**
 * A string the service answered with, fit to store and to send on: bounded, free of control
 * characters (a NUL makes PostgreSQL refuse the row after the payment was made) and of lone
 * surrogates (a store writes U+FFFD for one: an id the service never gave).
 */
export const clean = (s: unknown, max = 256): s is string => typeof s === 'string' && s.length > 0 && s.length <= max && !/[\p{Cc}\p{Cs}]/u.test(s);

/**
 * Who a payment goes to, from the userId → gamertag lookup made right before it: the gamertag,
 * or how the reward settles without a payment (nothing was sent). A gamertag the relay cannot
 * record is `malformed_gamertag`; the service not knowing the user, `unknown_user`; the service
 * out of reach or refusing the relay's key, deferred (the client retries).
 */
export function recipientOf(r: Outcome<GamertagData>): string | Settlement {
  if (r.kind === 'ok') return clean(r.data.gamertag, 64) ? r.data.gamertag : { state: 'failed', reason: 'malformed_gamertag' };
  if (r.kind === 'refused' && r.status < 500 && r.status !== 401 && r.status !== 403) return { state: 'failed', reason: 'unknown_user' };
  return { state: 'deferred', reason: r.kind === 'refused' ? `service_refused_${r.status}` : r.reason };
}

/**
 * The settlement a send-payment answer means for the reward of `userId` it paid. `gamertag`: the
 * name it was sent to, recorded with the outcome; absent for a late answer (after a timeout),
 * which settles the review it went to. An unclear answer without a gamertag is no settlement
 * (undefined): a late answer is itself never unclear.
 *
 * The reasons tell the caller what to log: `malformed_answer` (the transaction id is unusable),
 * `receiver_mismatch` (paid someone else, perhaps), `insufficient_balance` (the wallet is empty).
 */
export function settlementOf(r: Outcome<SendPaymentData>, paid: { userId: string; gamertag?: string | undefined }): Settlement | undefined {
  const to = paid.gamertag ? { gamertag: paid.gamertag } : {};
  switch (r.kind) {
    case 'ok':
      // Paid, perhaps: an operator settles it.
      if (!clean(r.data.transactionId)) return { state: 'needs_review', reason: 'malformed_answer', ...to };
      if (r.data.receiverId && r.data.receiverId !== paid.userId) return { state: 'needs_review', reason: 'receiver_mismatch', paymentId: r.data.transactionId, ...to };
      return r.data.status === 'settled'
        ? { state: 'paid', paymentId: r.data.transactionId, ...to }
        : { state: 'needs_review', reason: `payment_${r.data.status}`, paymentId: r.data.transactionId, ...to };
    case 'refused':
      // A refused key: nothing was paid, and the client's retry pays once the key is right.
      if (r.status === 401 || r.status === 403) return { state: 'deferred', reason: `service_refused_${r.status}` };
      if (r.message === MESSAGES.noUser) return { state: 'failed', reason: 'unknown_gamertag', ...to };
      if (r.message === MESSAGES.insufficientBalance) return { state: 'failed', reason: 'insufficient_balance', ...to };
      return { state: 'failed', reason: 'payment_refused', ...to };
    case 'unavailable':
      return { state: 'deferred', reason: r.reason };
    case 'unclear':
      return paid.gamertag === undefined ? undefined : { state: 'needs_review', reason: r.reason, ...to };
  }
}

/** Whether the payment-status endpoint answered a status the contract lists (the caller logs one it does not). */
export const knownStatus = (r: Outcome<TransactionData>): boolean => r.kind !== 'ok' || (TRANSACTION_STATUSES as readonly unknown[]).includes(r.data.status);

/**
 * What the payment-status endpoint says of a payment in review: paid, failed, or nothing yet
 * (undefined: pending, the service did not answer, or a status the contract does not list). Only
 * the service's own `TRANSACTION_STATUS_FAILED` fails it: any other word may mean it left.
 */
export function statusSettlement(r: Outcome<TransactionData>, paymentId: string): Settlement | undefined {
  if (r.kind !== 'ok') return undefined;
  if (r.data.status === 'TRANSACTION_STATUS_COMPLETED') return { state: 'paid', paymentId };
  if (r.data.status === 'TRANSACTION_STATUS_FAILED') return { state: 'failed', reason: 'payment_failed' };
  return undefined;
}
