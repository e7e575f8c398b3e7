import { satsFromMsats } from '../../contract/payments-api.js';
import type { WithdrawalRequestView } from '../../wire/relay-api.js';
import type { PaymentsClient } from '../payments/client.js';
import { Refusal } from './refusal.js';

/** The ids the service gives withdrawal requests: anything else is no such request, and never reaches the service's URL. */
const WITHDRAWAL_ID = /^[0-9a-zA-Z-]{1,64}$/;

/** A withdrawal request, fetched through the service, in the relay API's words (sats, not msats). */
export function createWithdrawalRequests(payments: Pick<PaymentsClient, 'withdrawalRequest'>) {
  return async function withdrawalRequest(id: string): Promise<WithdrawalRequestView> {
    if (!WITHDRAWAL_ID.test(id)) throw new Refusal('not_found', 'No such withdrawal request');
    const r = await payments.withdrawalRequest(id);
    if (r.kind === 'refused' && r.status !== 401 && r.status !== 403 && r.status < 500) throw new Refusal('not_found', 'No such withdrawal request');
    if (r.kind !== 'ok') throw new Refusal('service_unavailable', undefined, 5);
    const w = r.data;
    return {
      id: w.id,
      amountSats: satsFromMsats(w.amount),
      status: w.status,
      description: w.description,
      expiresAt: w.expiresAt,
      lnurl: w.invoice.request,
      uri: w.invoice.uri,
    };
  };
}

export type WithdrawalRequests = ReturnType<typeof createWithdrawalRequests>;
