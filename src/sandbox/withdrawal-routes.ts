import type { Hono } from 'hono';
import { DESCRIPTION_MAX_LENGTH, MESSAGES, PATHS, type WithdrawalRequest } from '../contract/payments-api.js';
import { fail, given, jsonBody, ok } from './answers.js';
import { postSigned } from './delivery.js';
import type { ProjectWallet } from './wallet.js';
import type { WithdrawalRequests } from './withdrawal-requests.js';

const DIGITS = /^[0-9]{1,18}$/;

/**
 * Withdrawal requests: `POST /v0/withdrawal-requests` (`WithdrawalRequestOptionsType` in,
 * `CreateWithdrawalRequestDataResponseType` out, @zbd/node dist/types/withdrawal.d.ts), `GET` by
 * id, and the test controls that make one and that play the player who claims it.
 */
export function mountWithdrawalRequests(app: Hono, requests: WithdrawalRequests, wallet: ProjectWallet, callbackSecret: string | undefined) {
  // Nothing leaves the wallet until a request is claimed: creating one does not change the balance.
  app.post(PATHS.withdrawalRequests, async (c) => {
    const body = await jsonBody(c);
    if (!body) return fail(c, 400, 'Request body must be a JSON object');
    const { amount, description } = body;
    // null is "not given" (see `given`); "" is a description still, an empty one.
    const [expiresIn, internalId, callbackUrl] = [given(body.expiresIn), given(body.internalId), given(body.callbackUrl)];
    if (amount === undefined || amount === null || description === undefined || description === null) {
      return fail(c, 422, 'Missing parameter: amount and description are required');
    }
    if (typeof amount !== 'string' || !DIGITS.test(amount)) return fail(c, 400, 'amount must be a string of millisatoshis');
    if (typeof description !== 'string' || description.length > DESCRIPTION_MAX_LENGTH) {
      return fail(c, 400, `description must be a string of at most ${DESCRIPTION_MAX_LENGTH} characters`);
    }
    if (expiresIn !== undefined && (typeof expiresIn !== 'number' || !Number.isInteger(expiresIn) || expiresIn <= 0)) {
      return fail(c, 400, 'expiresIn must be a whole number of seconds');
    }
    if (internalId !== undefined && typeof internalId !== 'string') return fail(c, 400, 'internalId must be a string');
    if (callbackUrl !== undefined && (typeof callbackUrl !== 'string' || !URL.canParse(callbackUrl))) return fail(c, 400, 'callbackUrl must be a URL');
    const wr = requests.create({
      amountMsats: amount,
      description,
      // The service's own default is not published; five minutes, as its SDK's example asks for.
      expiresInMs: (expiresIn ?? 300) * 1000,
      ...(internalId === undefined ? {} : { internalId }),
      ...(callbackUrl === undefined ? {} : { callbackUrl }),
    });
    return typeof wr === 'string' ? fail(c, 400, wr) : ok(c, 'Successfully created Withdrawal Request.', wr);
  });

  app.get('/v0/withdrawal-requests/:id', (c) => {
    const wr = requests.get(c.req.param('id'));
    return wr ? ok(c, 'Successfully retrieved Withdrawal Request.', wr) : fail(c, 404, 'Withdrawal Request not found');
  });

  // Test controls, not part of the service.
  app.post('/_sandbox/withdrawal-requests', async (c) => {
    const body = await jsonBody(c);
    const [internalId, callbackUrl] = [given(body?.internalId), given(body?.callbackUrl)];
    if (internalId !== undefined && typeof internalId !== 'string') return fail(c, 400, 'internalId must be a string');
    if (callbackUrl !== undefined && (typeof callbackUrl !== 'string' || !URL.canParse(callbackUrl))) return fail(c, 400, 'callbackUrl must be a URL');
    const wr = requests.create({
      amountSats: Number(body?.amountSats),
      description: typeof body?.description === 'string' ? body.description : 'Sandbox withdrawal',
      ...(internalId === undefined ? {} : { internalId }),
      ...(callbackUrl === undefined ? {} : { callbackUrl }),
    });
    return typeof wr === 'string' ? fail(c, 400, wr) : ok(c, 'Withdrawal Request created.', wr);
  });

  // A player claims it: the wallet pays its amount, it reads `completed`, and its callbackUrl
  // receives the bare withdrawal request (no envelope), as the service documents.
  app.post('/_sandbox/withdrawal-requests/:id/pay', async (c) => {
    const id = c.req.param('id');
    const found = requests.get(id);
    if (!found) return fail(c, 404, 'Withdrawal Request not found');
    if (found.status !== 'pending') return fail(c, 409, `The withdrawal request is ${found.status}: only a pending one can be claimed`);
    if (!wallet.debit(found.amount)) return fail(c, 400, MESSAGES.insufficientBalance);
    const wr = requests.claim(id) as WithdrawalRequest;
    const callbackStatus = wr.callbackUrl ? await postSigned(wr.callbackUrl, callbackSecret, JSON.stringify(wr)) : null;
    return c.json({ ok: true, withdrawalRequest: wr, callbackStatus });
  });
}
