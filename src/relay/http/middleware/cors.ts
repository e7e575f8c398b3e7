import type { MiddlewareHandler } from 'hono';

const ALLOW_HEADERS = 'Authorization, Content-Type, Idempotency-Key, Last-Event-ID';
const EXPOSE_HEADERS = 'Idempotent-Replayed, Retry-After';

/**
 * CORS for the allowed origins (`*` for any). Hono's own sets headers on `c.res`, which makes
 * @hono/node-server build a full Response for every answer; this one only uses `c.header`.
 */
export function cors(origins: readonly string[]): MiddlewareHandler {
  const any = origins.includes('*');
  return async function cors(c, next) {
    const origin = c.req.header('origin');
    const allowed = origin !== undefined && (any || origins.includes(origin));
    if (!any) c.header('Vary', 'Origin', { append: true });
    if (allowed) {
      c.header('Access-Control-Allow-Origin', any ? '*' : origin);
      c.header('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    }
    if (c.req.method === 'OPTIONS') {
      if (allowed) {
        c.header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
        c.header('Access-Control-Allow-Headers', ALLOW_HEADERS);
        c.header('Access-Control-Max-Age', '600');
      }
      return c.body(null, 204);
    }
    await next();
  };
}
