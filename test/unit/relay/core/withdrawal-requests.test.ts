// A withdrawal request through the service (core/withdrawal-requests.ts): the relay API's view of
// it, and the refusals (an id that is no id never reaches the service's URL).
import { describe, expect, it } from 'vitest';
import type { WithdrawalRequest } from '../../../../src/contract/payments-api.js';
import { Refusal } from '../../../../src/relay/core/refusal.js';
import { createWithdrawalRequests } from '../../../../src/relay/core/withdrawal-requests.js';
import type { Outcome } from '../../../../src/relay/payments/client.js';

const request: WithdrawalRequest = {
  id: 'w-1',
  internalId: 'i-1',
  unit: 'msats',
  amount: '21000',
  status: 'pending' as WithdrawalRequest['status'],
  description: 'prize',
  createdAt: '2026-11-25T22:00:00Z',
  expiresAt: '2026-11-26T22:00:00Z',
  confirmedAt: '',
  fee: '0',
  callbackUrl: '',
  invoice: { request: 'lnurl1', fastRequest: '', uri: 'lightning:lnurl1', fastUri: '' },
};

function withAnswer(answer: Outcome<WithdrawalRequest>) {
  const asked: string[] = [];
  const lookup = createWithdrawalRequests({
    withdrawalRequest: async (id) => {
      asked.push(id);
      return answer;
    },
  });
  return { lookup, asked };
}

const refusalOf = (p: Promise<unknown>) =>
  p.then(
    () => expect.unreachable('not refused'),
    (e: unknown) => {
      expect(e).toBeInstanceOf(Refusal);
      return [(e as Refusal).code, (e as Refusal).retryAfterSeconds];
    },
  );

describe('a withdrawal request', () => {
  it('is shown in sats, with its LNURL and URI for a QR code', async () => {
    const { lookup } = withAnswer({ kind: 'ok', data: request });
    expect(await lookup('w-1')).toEqual({
      id: 'w-1',
      amountSats: 21,
      status: 'pending',
      description: 'prize',
      expiresAt: '2026-11-26T22:00:00Z',
      lnurl: 'lnurl1',
      uri: 'lightning:lnurl1',
    });
  });

  it('an id that is no id is not found, and the service is not asked', async () => {
    const { lookup, asked } = withAnswer({ kind: 'ok', data: request });
    for (const id of ['', '../wallet', 'a'.repeat(65), 'w 1']) expect(await refusalOf(lookup(id))).toEqual(['not_found', undefined]);
    expect(asked).toEqual([]);
  });

  it('one the service does not know is not found; the service out of reach, or refusing the key, is service_unavailable', async () => {
    expect(await refusalOf(withAnswer({ kind: 'refused', status: 404, message: 'no' }).lookup('w-1'))).toEqual(['not_found', undefined]);
    for (const answer of [
      { kind: 'refused', status: 401, message: 'key' },
      { kind: 'refused', status: 502, message: 'bad gateway' },
      { kind: 'unavailable', reason: 'timeout' },
    ] as const)
      expect(await refusalOf(withAnswer(answer).lookup('w-1'))).toEqual(['service_unavailable', 5]);
  });
});
