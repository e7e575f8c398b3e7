import { Hono } from 'hono';
import type { WithdrawalRequests } from '../../core/withdrawal-requests.js';
import type { RelayEnv } from '../context.js';

/** `GET /v1/withdrawal-requests/{id}`: a withdrawal request, fetched through the service (core/withdrawal-requests.ts). */
export function withdrawalsRoute(withdrawalRequest: WithdrawalRequests) {
  return new Hono<RelayEnv>().get('/:id', async (c) => c.json(await withdrawalRequest(c.req.param('id'))));
}
