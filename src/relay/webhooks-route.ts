import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import type { RelayEnv } from './context.js';
import type { EventHub, EventLog } from './event-log.js';
import { RAMP_EVENTS } from './payments-api.js';
import { RelayProblem } from './problems.js';

export interface WebhookOptions {
  /** Verifies `sha256=<hex HMAC-SHA256 of the raw body>`; without it deliveries are unsigned (see the README). */
  secret?: string | undefined;
  /** Default X-ZBD-Signature. */
  signatureHeader?: string;
  /** Where the service puts its event id, if it does. Default X-ZBD-Event-Id. */
  eventIdHeader?: string;
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

/**
 * `POST /v1/webhooks/payments`: the service's events, in either spelling. Each is acted on once
 * however often it is delivered; every genuine delivery gets 200.
 */
export function webhooksRoute(events: EventLog, hub: EventHub, logger: Logger, o: WebhookOptions) {
  return new Hono<RelayEnv>().post('/', async (c) => {
    if (Number(c.req.header('content-length') ?? 0) > MAX_WEBHOOK_BYTES) throw new RelayProblem('payload_too_large');
    const raw = await c.req.text();
    if (raw.length > MAX_WEBHOOK_BYTES) throw new RelayProblem('payload_too_large');
    if (o.secret && !signatureValid(o.secret, raw, c.req.header(o.signatureHeader ?? 'X-ZBD-Signature'))) {
      logger.warn({ event: 'webhook_refused', reason: 'bad_signature' });
      throw new RelayProblem('unauthorized', 'Bad or missing webhook signature');
    }
    let body: { type?: unknown; event?: unknown; id?: unknown; data?: Record<string, unknown> };
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      throw new RelayProblem('bad_request', 'The body is not valid JSON');
    }
    const type = typeof body.type === 'string' ? body.type : typeof body.event === 'string' ? body.event : undefined;
    if (!type || typeof body.data !== 'object' || body.data === null) throw new RelayProblem('bad_request', 'An event has a type (or event) and data');
    const data = body.data;
    const eventId = c.req.header(o.eventIdHeader ?? 'X-ZBD-Event-Id') ?? (typeof body.id === 'string' ? body.id : createHash('sha256').update(raw).digest('hex'));
    const referenceId = typeof data.reference_id === 'string' ? data.reference_id : undefined;
    const kind = kindOf(type);

    const { fresh, event } = await events.receiveWebhook(eventId, type, referenceId, () => {
      if (kind === 'completed') return { type: 'ramp.purchase.completed', data: { amount: data.amount, currency: data.currency, referenceId } };
      if (kind === 'failed') return { type: 'ramp.purchase.failed', data: { referenceId } };
      return undefined;
    });
    logger.info({ event: 'webhook', type, eventId, referenceId, fresh, userId: event?.userId, kycUserId: kind === 'kycCompleted' ? data.user_id : undefined });
    if (event) hub.publish(event);
    return c.json({ received: true, duplicate: !fresh });
  });
}
