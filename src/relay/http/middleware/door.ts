import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { setAnswerHeader } from '../answer-headers.js';
import { addressKey, clientAddress } from '../client-address.js';
import { type RelayEnv, socketAddress } from '../context.js';
import type { HttpSettings } from '../options.js';
import { SECURITY_HEADERS } from '../security-headers.js';

/**
 * What every request gets at the door: the security headers, and the key its caller's address
 * counts under in every per-address limit (decided here, once, through trusted proxies only).
 */
export function securityHeaders(settings: HttpSettings, logger: Logger): MiddlewareHandler<RelayEnv> {
  const trustProxy = settings.trustProxy;
  const unknownAddress = warnOfUnknownAddresses(settings, logger);
  return async function securityHeaders(c, next) {
    // On Node's response, so the answer's own headers stay a plain object (answer-headers.ts).
    for (const [name, value] of SECURITY_HEADERS) setAnswerHeader(c, name, value);
    // The one place the caller's address is decided, and the key every per-address limit counts it under.
    const peer = settings.clientAddress?.(c.req.raw, c.env) || socketAddress(c);
    const key = addressKey(peer && trustProxy ? clientAddress(peer, c.req.header('x-forwarded-for'), trustProxy) : peer);
    if (key === undefined) unknownAddress();
    c.set('clientKey', key);
    await next();
  };
}

/** Every route that reads a body (the game's, the webhooks', the operator's) reads it bounded. */
export function bodyLimit(settings: HttpSettings): MiddlewareHandler<RelayEnv> {
  const { maxBodyBytes, bodyTimeoutMs } = settings;
  return async function bodyLimit(c, next) {
    c.set('maxBodyBytes', maxBodyBytes);
    if (bodyTimeoutMs) c.set('bodyTimeoutMs', bodyTimeoutMs);
    await next();
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
