// A payment whose outcome the ledger could not record at once (core/payouts.ts's keepTrying), with
// relays sharing one ledger: while this relay could not reach the store, another's recovery put
// the entry in review (its lease lapsed) and an operator decided it. Red-team pass F.
import type { Logger } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SendPaymentData } from '../../../../src/contract/payments-api.js';
import { createPayouts } from '../../../../src/relay/core/payouts.js';
import type { Ledger, LedgerEntry } from '../../../../src/relay/core/ports/ledger.js';
import type { Settlements, SettleRequest } from '../../../../src/relay/core/settlements.js';
import type { Outcome, PaymentsClient } from '../../../../src/relay/payments/client.js';

const quiet = { error: () => undefined, warn: () => undefined, info: () => undefined } as unknown as Logger;
const sending: LedgerEntry = { id: 'r-1', userId: 'u-1', idempotencyKey: 'k', requestHash: 'h', achievementId: 'gem', sats: 21, state: 'sending', phase: 'claimed', createdAt: 0 };
const paidAnswer: Outcome<SendPaymentData> = {
  kind: 'ok',
  data: { id: 'p-1', status: 'settled', transactionId: 'tx-1', receiverId: 'u-1', amount: '21000', comment: '', settledAt: '' },
};

afterEach(() => {
  vi.useRealTimers();
});

describe('a payment the ledger could not record at once', () => {
  it('sends the entry back to review when, by the time the store answers, an operator marked it failed: it was paid', async () => {
    vi.useFakeTimers();
    // Where the entry is by the time the store answers again: interrupted by another relay, then marked failed by hand.
    let current: LedgerEntry = sending;
    const requests: SettleRequest[] = [];
    const settlements = {
      send: async () => true,
      settle: async (_id: string, request: SettleRequest) => {
        requests.push(request);
        if (requests.length === 1) {
          current = { ...sending, state: 'failed', reason: 'marked_failed' };
          throw Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
        }
        if (request.transition !== 'contradict') return undefined; // record: from sending or needs_review only
        current = { ...current, state: 'needs_review', reason: 'contradicted' };
        return current;
      },
    } as unknown as Settlements;
    const ledger = { get: async () => current } as unknown as Ledger;
    const payments = { gamertagByUserId: async () => ({ kind: 'ok', data: { gamertag: 'alice' } }), sendPayment: async () => paidAnswer } as unknown as PaymentsClient;
    const payouts = createPayouts(ledger, settlements, payments, quiet);
    await expect(payouts.pay(sending, 'Gem')).rejects.toThrow('connection refused');
    const drained = payouts.drain();
    await vi.runAllTimersAsync();
    await drained;
    expect(requests.map((r) => r.transition)).toEqual(['settle', 'record', 'contradict']);
    expect(requests[2]!.to).toMatchObject({ state: 'needs_review', reason: 'contradicted', paymentId: 'tx-1' });
    expect(current.state).toBe('needs_review');
  });
});
