import type { Hono, MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { openOutgoing, setAnswerHeader } from '../answer-headers.js';
import { addressKey, clientAddress } from '../client-address.js';
import { type RelayContext, type RelayEnv, requestHeader, socketAddress } from '../context.js';
import type { HttpSettings } from '../options.js';
import { SECURITY_HEADERS } from '../security-headers.js';
import { methodCheck } from './allowed-methods.js';
import { corsCheck } from './cors.js';
import { refuseNul } from './nul-guard.js';

/**
 * The door: everything every request goes through before its route, in one middleware layer that
 * calls each concern in turn (a layer each cost a closure, a promise and ~1 KB a request): the
 * security headers and the caller's address key; for the game's API (`/v1/*`) CORS (a preflight
 * is answered here) and the allowed methods (405); the NUL guard; the body's bounds. A refusal is
 * thrown, and the app's error handler answers it, with the headers set before it.
 */
export function door(settings: HttpSettings, logger: Logger, app: Hono<never>): MiddlewareHandler<RelayEnv> {
  const keyOf = callerKey(settings, logger);
  const cors = corsCheck(settings.allowedOrigins, logger);
  const allowedMethod = methodCheck(app);
  const { maxBodyBytes, bodyTimeoutMs } = settings;
  return async function door(c, next) {
    const outgoing = openOutgoing(c);
    for (const [name, value] of SECURITY_HEADERS) setAnswerHeader(c, name, value, undefined, outgoing);
    c.set('clientKey', keyOf(c));
    const path = c.req.path;
    // As Hono matches `/v1/*`: the prefix itself too.
    if (path.startsWith('/v1/') || path === '/v1') {
      const preflight = cors(c, path, outgoing);
      if (preflight) return preflight;
      allowedMethod(c, path);
    }
    refuseNul(c);
    c.set('maxBodyBytes', maxBodyBytes);
    if (bodyTimeoutMs) c.set('bodyTimeoutMs', bodyTimeoutMs);
    await next();
  };
}

/**
 * The key the caller's address counts under in every per-address limit, decided once per request
 * at the door, through trusted proxies only.
 */
export function callerKey(settings: HttpSettings, logger: Logger): (c: RelayContext) => string | undefined {
  const trustProxy = settings.trustProxy;
  const unknownAddress = warnOfUnknownAddresses(settings, logger);
  return (c) => {
    const peer = settings.clientAddress?.(c.req.raw, c.env) || socketAddress(c);
    const key = addressKey(peer && trustProxy ? clientAddress(peer, requestHeader(c, 'x-forwarded-for'), trustProxy) : peer);
    if (key === undefined) unknownAddress();
    return key;
  };
}

/**
 * Without a client address (no socket, no `clientAddress` option), the per-address limits cannot
 * count a request: it passes them, rather than every client sharing one bucket (ten players, and
 * the seventh is refused). Said loudly: at start where the runtime plainly gives no socket (Bun,
 * Deno, an edge runtime), else at the first such request; once.
 */
function warnOfUnknownAddresses(settings: HttpSettings, logger: Logger): () => void {
  const limits = settings.addressLimits;
  let warned = limits.length === 0;
  const warn = (when: string) => {
    warned = true;
    logger.warn(
      { event: 'client_address_unknown', limits, option: 'clientAddress' },
      `NO CLIENT ADDRESS ${when}: the per-address limits (${limits.join(', ')}) do not count such requests. ` +
        "Give the relay the caller's address: createRelay({ clientAddress(request, env) { … } }) (docs/relay-api.md#addresses)",
    );
  };
  const node = typeof globalThis.process?.versions?.node === 'string' && !('Bun' in globalThis) && !('Deno' in globalThis);
  if (!warned && !settings.clientAddress && !node) warn('on this runtime (no socket, no clientAddress option)');
  return () => {
    if (!warned) warn(settings.clientAddress ? 'from clientAddress or a socket for a request' : 'for a request (no socket, no clientAddress option)');
  };
}
