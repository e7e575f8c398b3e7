// What each answer of the payments service means for a reward (core/payout-outcome.ts), pure: the
// payouts' tests over the sandbox show the answers reach it; these show what every kind becomes.
import { describe, expect, it } from 'vitest';
import { MESSAGES, type SendPaymentData, type TransactionData } from '../../../../src/contract/payments-api.js';
import { clean, knownStatus, recipientOf, settlementOf, statusSettlement } from '../../../../src/relay/core/payout-outcome.js';
import type { Outcome } from '../../../../src/relay/payments/client.js';

const paid = { userId: 'u-1', gamertag: 'alice' };
const sent = (over: Partial<SendPaymentData> = {}): Outcome<SendPaymentData> => ({
  kind: 'ok',
  data: { id: 'p-1', status: 'settled', transactionId: 'tx-1', receiverId: 'u-1', amount: '21000', comment: '', settledAt: '', ...over },
});
const refused = (status: number, message = 'no'): Outcome<never> => ({ kind: 'refused', status, message });
const status = (s: TransactionData['status']): Outcome<TransactionData> => ({
  kind: 'ok',
  data: { id: 'tx-1', receiverId: 'u-1', amount: '21000', fee: '0', unit: 'msats', processedAt: '', confirmedAt: '', status: s } as TransactionData,
});

describe('a send-payment answer', () => {
  it('settled: paid, with the transaction id and the gamertag it went to', () => {
    expect(settlementOf(sent(), paid)).toEqual({ state: 'paid', paymentId: 'tx-1', gamertag: 'alice' });
  });

  it('accepted but not settled: review, with the id to ask the payment-status endpoint about', () => {
    expect(settlementOf(sent({ status: 'pending' }), paid)).toEqual({ state: 'needs_review', reason: 'payment_pending', paymentId: 'tx-1', gamertag: 'alice' });
  });

  it('paid to someone else: review, never paid', () => {
    expect(settlementOf(sent({ receiverId: 'u-2' }), paid)).toEqual({ state: 'needs_review', reason: 'receiver_mismatch', paymentId: 'tx-1', gamertag: 'alice' });
    // A service that does not say the receiver is believed.
    expect(settlementOf(sent({ receiverId: '' }), paid)).toMatchObject({ state: 'paid' });
  });

  it('a transaction id the relay cannot store (empty, too long, NUL, lone surrogate, not a string): review, without it', () => {
    for (const transactionId of ['', 'x'.repeat(257), 'tx\u0000', 'tx\uD800', 42 as unknown as string]) {
      expect(settlementOf(sent({ transactionId }), paid)).toEqual({ state: 'needs_review', reason: 'malformed_answer', gamertag: 'alice' });
    }
  });

  it('refused: failed, with the reason the service gave in our words', () => {
    expect(settlementOf(refused(400, MESSAGES.noUser), paid)).toEqual({ state: 'failed', reason: 'unknown_gamertag', gamertag: 'alice' });
    expect(settlementOf(refused(400, MESSAGES.insufficientBalance), paid)).toEqual({ state: 'failed', reason: 'insufficient_balance', gamertag: 'alice' });
    expect(settlementOf(refused(422, 'something else'), paid)).toEqual({ state: 'failed', reason: 'payment_refused', gamertag: 'alice' });
  });

  it('the key refused (401, 403): deferred, so the retry pays once the key is right', () => {
    expect(settlementOf(refused(401, MESSAGES.invalidApiKey), paid)).toEqual({ state: 'deferred', reason: 'service_refused_401' });
    expect(settlementOf(refused(403), paid)).toEqual({ state: 'deferred', reason: 'service_refused_403' });
  });

  it('unavailable (nothing can have been paid): deferred, for the client to retry', () => {
    expect(settlementOf({ kind: 'unavailable', reason: 'connect_refused' }, paid)).toEqual({ state: 'deferred', reason: 'connect_refused' });
  });

  it('unclear (a timeout after sending): review, never sent again', () => {
    expect(settlementOf({ kind: 'unclear', reason: 'timeout' }, paid)).toEqual({ state: 'needs_review', reason: 'timeout', gamertag: 'alice' });
  });

  it('a late answer (no gamertag): the same settlements without the name, and no settlement for an unclear one', () => {
    const late = { userId: 'u-1' };
    expect(settlementOf(sent(), late)).toEqual({ state: 'paid', paymentId: 'tx-1' });
    expect(settlementOf(refused(400, MESSAGES.noUser), late)).toEqual({ state: 'failed', reason: 'unknown_gamertag' });
    expect(settlementOf({ kind: 'unclear', reason: 'timeout' }, late)).toBeUndefined();
  });
});

describe('the gamertag lookup before a payment', () => {
  it('a usable gamertag is whom the payment goes to', () => {
    expect(recipientOf({ kind: 'ok', data: { gamertag: 'alice' } })).toBe('alice');
  });

  it('a gamertag the relay cannot record fails the reward, with nothing sent', () => {
    for (const gamertag of ['', 'a'.repeat(65), 'al\u0007ice']) expect(recipientOf({ kind: 'ok', data: { gamertag } })).toEqual({ state: 'failed', reason: 'malformed_gamertag' });
  });

  it('an unknown user fails it; a refused key or a service out of reach defers it', () => {
    expect(recipientOf(refused(404))).toEqual({ state: 'failed', reason: 'unknown_user' });
    expect(recipientOf(refused(401))).toEqual({ state: 'deferred', reason: 'service_refused_401' });
    expect(recipientOf(refused(503))).toEqual({ state: 'deferred', reason: 'service_refused_503' });
    expect(recipientOf({ kind: 'unavailable', reason: 'timeout' })).toEqual({ state: 'deferred', reason: 'timeout' });
    expect(recipientOf({ kind: 'unclear', reason: 'timeout' })).toEqual({ state: 'deferred', reason: 'timeout' });
  });
});

describe('the payment-status endpoint on a payment in review', () => {
  it('completed: paid under the id asked about; failed: failed; pending or no answer: nothing yet', () => {
    expect(statusSettlement(status('TRANSACTION_STATUS_COMPLETED'), 'tx-1')).toEqual({ state: 'paid', paymentId: 'tx-1' });
    expect(statusSettlement(status('TRANSACTION_STATUS_FAILED'), 'tx-1')).toEqual({ state: 'failed', reason: 'payment_failed' });
    expect(statusSettlement(status('TRANSACTION_STATUS_PENDING'), 'tx-1')).toBeUndefined();
    expect(statusSettlement({ kind: 'unavailable', reason: 'timeout' }, 'tx-1')).toBeUndefined();
    expect(statusSettlement(refused(404), 'tx-1')).toBeUndefined();
  });

  it('a status the contract does not list (or none): nothing yet, never failed, since the payment may have left', () => {
    for (const s of ['TRANSACTION_STATUS_PROCESSING', 'completed', 'failed', '', undefined]) {
      const r = status(s as TransactionData['status']);
      expect(statusSettlement(r, 'tx-1')).toBeUndefined();
      expect(knownStatus(r)).toBe(false);
    }
    expect(knownStatus(status('TRANSACTION_STATUS_PENDING'))).toBe(true);
  });
});

describe('a string from the service', () => {
  it('is usable when non-empty, bounded, and free of control characters and lone surrogates', () => {
    expect(clean('tx-😀')).toBe(true);
    expect(clean('x'.repeat(64), 64)).toBe(true);
    expect(clean('x'.repeat(65), 64)).toBe(false);
    expect(clean('a\nb')).toBe(false);
    expect(clean('\uDC00')).toBe(false);
    expect(clean(null)).toBe(false);
  });
});
