import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import { clientIp, parseJsonObject, rateLimited, readText, type RelayEnv } from '../context.js';
import type { EventHub } from '../../core/live-events.js';
import type { EventLog } from '../../store/event-log.js';
import { DEFAULT_SIGNATURE_HEADER, RAMP_EVENTS } from '../../../contract/payments-api.js';
import { RelayProblem } from '../problems.js';
import type { RateLimiter } from '../middleware/rate-limit.js';

export interface WebhookOptions {
  /** Verifies `sha256=<hex HMAC-SHA256 of the raw body>`; without it deliveries are unsigned (see the README). */
  secret?: string | undefined;
  /** Default X-ZBD-Signature. */
  signatureHeader?: string;
  /** An event dated further than this from now is refused (replays). 0: no check. Default 300. */
  toleranceSeconds?: number;
}

const MAX_WEBHOOK_BYTES = 64 * 1024;

/** Checks `sha256=<hex>` against the HMAC of the raw body, in constant time. */
export function signatureValid(secret: string, rawBody: string, header: string | undefined): boolean {
  const given = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? '')?.[1];
  if (!given) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return timingSafeEqual(Buffer.from(given, 'hex'), expected);
}

const kindOf = (type: string) =>
  (Object.keys(RAMP_EVENTS) as Array<keyof typeof RAMP_EVENTS>).find((k) => (RAMP_EVENTS[k] as readonly string[]).includes(type));

const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/**
 * What makes a delivery this event, from what the signature covers: the event's own id in the
 * body, else the body's hash. Never a header: a captured delivery resent with a new header is
 * still the same event.
 */
function eventIdOf(body: Record<string, unknown>, raw: string): string {
  const own = nonEmpty(body.id) ?? nonEmpty(body.event_id);
  return own ? `id:${own}` : `sha256:${createHash('sha256').update(raw).digest('hex')}`;
}

/** When the event says it happened (ms), if it says: `created_at` / `createdAt` / `timestamp`, ISO or epoch seconds or ms. */
function timestampOf(body: Record<string, unknown>): number | undefined {
  const t = body.created_at ?? body.createdAt ?? body.timestamp;
  if (typeof t === 'number' && Number.isFinite(t)) return t < 1e12 ? t * 1000 : t;
  if (typeof t === 'string') {
    const ms = /^\d+$/.test(t) ? Number(t) * (t.length <= 10 ? 1000 : 1) : Date.parse(t);
    if (Number.isFinite(ms)) return ms;
    throw new RelayProblem('bad_request', 'The event timestamp is not a date');
  }
  return undefined;
}

/**
 * `POST /v1/webhooks/payments`: the service's events, in either spelling. Each is acted on once
 * however often it is delivered, and only while fresh; every genuine delivery gets 200.
 */
export function webhooksRoute(events: EventLog, hub: EventHub, logger: Logger, limiter: RateLimiter, o: WebhookOptions) {
  const toleranceMs = (o.toleranceSeconds ?? 300) * 1000;
  return new Hono<RelayEnv>().post('/', async (c) => {
    // Without a secret every unique delivery is a database write: limit who can make them.
    rateLimited(limiter, `webhook:${clientIp(c)}`);
    const raw = await readText(c, MAX_WEBHOOK_BYTES);
    if (o.secret && !signatureValid(o.secret, raw, c.req.header(o.signatureHeader ?? DEFAULT_SIGNATURE_HEADER))) {
      logger.warn({ event: 'webhook_refused', reason: 'bad_signature' });
      throw new RelayProblem('unauthorized', 'Bad or missing webhook signature');
    }
    const body = parseJsonObject(raw);
    const type = nonEmpty(body.type) ?? nonEmpty(body.event);
    if (!type || typeof body.data !== 'object' || body.data === null || Array.isArray(body.data)) {
      throw new RelayProblem('bad_request', 'An event has a type (or event) and a data object');
    }
    const at = timestampOf(body);
    if (toleranceMs > 0 && at !== undefined && Math.abs(Date.now() - at) > toleranceMs) {
      logger.warn({ event: 'webhook_refused', reason: 'stale', type, at: new Date(at).toISOString() });
      throw new RelayProblem('stale_event', `The event is dated ${new Date(at).toISOString()}, outside the ${toleranceMs / 1000} s tolerance`);
    }
    const data = body.data as Record<string, unknown>;
    const eventId = eventIdOf(body, raw);
    const referenceId = nonEmpty(data.reference_id);
    const kind = kindOf(type);

    const playerEvent =
      kind === 'completed'
        ? { type: 'ramp.purchase.completed', data: { amount: data.amount, currency: data.currency, referenceId } }
        : kind === 'failed'
          ? { type: 'ramp.purchase.failed', data: { referenceId } }
          : undefined;
    const { fresh, event } = await events.receiveWebhook(eventId, type, referenceId, playerEvent);
    logger.info({ event: 'webhook', type, eventId, referenceId, fresh, userId: event?.userId, kycUserId: kind === 'kycCompleted' ? data.user_id : undefined });
    if (event) hub.publish(event);
    return c.json({ received: true, duplicate: !fresh });
  });
}
