import type { Context } from 'hono';
import type { Logger } from 'pino';
import { openOutgoing, setAnswerHeader } from '../answer-headers.js';
import { requestHeader } from '../context.js';

const ALLOW_HEADERS = 'Authorization, Content-Type, Idempotency-Key, Last-Event-ID';
// Date: a game on another origin reads the relay's clock in it (the client's repeat rules count
// by the relay's time); it is no safelisted response header.
const EXPOSE_HEADERS = 'Date, Idempotent-Replayed, Retry-After';
/** Readable from any origin, so a game can tell "origin not allowed" from "unreachable". */
const HEALTH = '/v1/health';

/**
 * May a browser page at the request's Origin call the relay? Yes with `*`, an origin listed, the
 * relay's own host (same origin), or no Origin at all (not a cross-origin browser call).
 * The health route reports it: `originAllowed(origins, c.req.raw)`.
 */
export function originAllowed(origins: readonly string[], request: Request): boolean {
  const origin = request.headers.get('origin');
  return origin === null || origins.includes('*') || origins.includes(origin) || sameHost(origin, request.url);
}

function sameHost(origin: string, url: string): boolean {
  try {
    return new URL(origin).host === new URL(url).host;
  } catch {
    return false;
  }
}

/**
 * CORS for the allowed origins (`*` for any), as the door runs it (middleware/door.ts): the
 * preflight's answer, or undefined to go on. Hono's own sets headers on `c.res`, which makes
 * @hono/node-server build a full Response for every answer; this one only sets them on the answer
 * (answer-headers.ts). A refused origin is logged, once per origin per minute, naming
 * RELAY_ALLOWED_ORIGINS: a game on a new domain otherwise only sees "failed to fetch".
 */
export function corsCheck(origins: readonly string[], logger?: Pick<Logger, 'warn'>, now = Date.now) {
  const any = origins.includes('*');
  const told = new Map<string, number>();
  const tell = (origin: string, path: string) => {
    const t = now();
    const last = told.get(origin);
    if (last !== undefined && t - last < 60_000) return;
    if (told.size >= 1000) told.clear();
    told.set(origin, t);
    logger?.warn(
      { event: 'origin_refused', origin: origin.slice(0, 200), path, setting: 'RELAY_ALLOWED_ORIGINS' },
      `refused a browser call from ${origin.slice(0, 200)}: add it to RELAY_ALLOWED_ORIGINS to allow it (said once a minute per origin)`,
    );
  };
  return function cors(c: Context, path: string, outgoing = openOutgoing(c)): Response | undefined {
    const origin = requestHeader(c, 'origin');
    const allowed = origin !== undefined && (any || origins.includes(origin) || sameHost(origin, c.req.url));
    if (origin !== undefined && !allowed) tell(origin, path);
    if (!any) setAnswerHeader(c, 'Vary', 'Origin', APPEND, outgoing);
    if (allowed || (origin !== undefined && path === HEALTH)) {
      setAnswerHeader(c, 'Access-Control-Allow-Origin', any ? '*' : origin, undefined, outgoing);
      setAnswerHeader(c, 'Access-Control-Expose-Headers', EXPOSE_HEADERS, undefined, outgoing);
    }
    if (c.req.method !== 'OPTIONS') return undefined;
    if (allowed) {
      c.header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
      c.header('Access-Control-Allow-Headers', ALLOW_HEADERS);
      c.header('Access-Control-Max-Age', '600');
    }
    return c.body(null, 204);
  };
}

const APPEND = { append: true };
