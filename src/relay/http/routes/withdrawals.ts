import { Hono } from 'hono';
import { satsFromMsats } from '../../../contract/payments-api.js';
import type { WithdrawalRequestView } from '../../../wire/relay-api.js';
import type { PaymentsClient } from '../../payments/client.js';
import type { RelayEnv } from '../context.js';
import { RelayProblem } from '../problems.js';

/** `GET /v1/withdrawal-requests/{id}`: a withdrawal request, fetched through the service. */
export function withdrawalsRoute(payments: PaymentsClient) {
  return new Hono<RelayEnv>().get('/:id', async (c) => {
    const id = c.req.param('id');
    if (!/^[0-9a-zA-Z-]{1,64}$/.test(id)) throw new RelayProblem('not_found', 'No such withdrawal request');
    const r = await payments.withdrawalRequest(id);
    if (r.kind === 'refused' && r.status !== 401 && r.status !== 403 && r.status < 500) throw new RelayProblem('not_found', 'No such withdrawal request');
    if (r.kind !== 'ok') throw new RelayProblem('service_unavailable', undefined, { 'Retry-After': '5' });
    const w = r.data;
    return c.json({
      id: w.id,
      amountSats: satsFromMsats(w.amount),
      status: w.status,
      description: w.description,
      expiresAt: w.expiresAt,
      lnurl: w.invoice.request,
      uri: w.invoice.uri,
    } satisfies WithdrawalRequestView);
  });
}
