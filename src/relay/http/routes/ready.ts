import { type Context, Hono } from 'hono';
import type { Problem, Readiness as ReadyBody } from '../../../wire/relay-api.js';
import type { Readiness } from '../../ops/readiness.js';
import type { RelayEnv } from '../context.js';
import { PROBLEMS } from '../problems.js';

/** Seconds a load balancer is told to wait before asking a relay that is not ready again. */
const RETRY_AFTER_SECONDS = 5;

const HEADERS = { 'content-type': 'application/problem+json', 'retry-after': String(RETRY_AFTER_SECONDS), 'cache-control': 'no-store' };

/** The relay began to stop: `503 not_ready` with `"draining": true`, from the first moment, whatever else answers. */
function stopping(c: Context<RelayEnv>) {
  const [status, title] = PROBLEMS.not_ready;
  const body: Problem & { draining: true } = {
    type: 'https://github.com/rewardbus/rewardbus/blob/main/docs/relay-api.md#not_ready',
    title,
    status,
    code: 'not_ready',
    detail: 'The relay is stopping: send requests to another.',
    draining: true,
  };
  return c.body(JSON.stringify(body), status, HEADERS);
}

/**
 * `GET /v1/ready`: 200 when the store and the payments service answer, else 503 naming what is
 * down (and why), with Retry-After; 503 too from the moment the relay begins to stop. For load
 * balancers and orchestrators; `/v1/health` stays the liveness check.
 */
export function readyRoute(readiness: Readiness) {
  return new Hono<RelayEnv>().get('/', async (c) => {
    const { store, service, draining } = await readiness.check();
    if (draining) return stopping(c);
    if (store.state === 'ok' && service.state === 'ok') return c.json({ ok: true, store: 'ok', service: 'ok' } satisfies ReadyBody);
    const [status, title] = PROBLEMS.not_ready;
    const down = [store.state === 'down' && `the store (${store.reason})`, service.state === 'down' && `the payments service (${service.reason})`].filter(Boolean);
    const body: Problem & { store: 'ok' | 'down'; service: 'ok' | 'down' } = {
      type: 'https://github.com/rewardbus/rewardbus/blob/main/docs/relay-api.md#not_ready',
      title,
      status,
      code: 'not_ready',
      detail: `Down: ${down.join(' and ')}.`,
      store: store.state,
      service: service.state,
    };
    return c.body(JSON.stringify(body), status, HEADERS);
  });
}
