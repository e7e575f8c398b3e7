import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import { DEFAULT_SIGNATURE_HEADER, RAMP_EVENTS } from '../../../contract/payments-api.js';
import type { EventHub } from '../../core/live-events.js';
import type { EventLog } from '../../core/ports/event-log.js';
import { secretList } from '../../core/secret-list.js';
import { DEFAULTS } from '../../settings/schema.js';
import { addressScope, parseJsonObject, type RelayEnv, rateLimited, readText } from '../context.js';
import type { RateLimiter } from '../middleware/rate-limit.js';
import { RelayProblem } from '../problems.js';
import { purchaseAmountOf } from '../webhook-purchase.js';
import { webhookTimestamp } from '../webhook-time.js';

export interface WebhookOptions {
  /**
   * Verifies `sha256=<hex HMAC-SHA256 of the raw body>`. Several (an array, or a comma-separated
   * list) all verify, so the secret can rotate: the first is the one to sign with (the sandbox).
   */
  secret?: string | readonly string[] | undefined;
  /**
   * Takes deliveries with no signature check when there is no secret. Default false: without a
   * secret every delivery is refused (401), since anyone could post a purchase to a player.
   */
  allowUnsigned?: boolean;
  /** Default X-ZBD-Signature. */
  signatureHeader?: string;
  /** An event dated further than this from now is refused (replays). 0: no check. Default: WEBHOOK_TOLERANCE_SECONDS's. */
  toleranceSeconds?: number;
}

const MAX_WEBHOOK_BYTES = 64 * 1024;
/** An event id, type or reference longer than this is no one's: 400, not a key too large for an index. */
const MAX_ID_LENGTH = 512;

/** The secrets that verify, in order: the first signs. */
export const webhookSecrets = (secret: WebhookOptions['secret']): string[] => secretList(secret);
/** The secret to sign deliveries with (the sandbox's): the first of the list. */
export const signingSecret = (secret: WebhookOptions['secret']): string | undefined => webhookSecrets(secret)[0];

/** Checks `sha256=<hex>` against the HMAC of the raw body, in constant time. */
export function signatureValid(secret: string, rawBody: string, header: string | undefined): boolean {
  const given = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? '')?.[1];
  if (!given) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return timingSafeEqual(Buffer.from(given, 'hex'), expected);
}

const kindOf = (type: string) => (Object.keys(RAMP_EVENTS) as Array<keyof typeof RAMP_EVENTS>).find((k) => (RAMP_EVENTS[k] as readonly string[]).includes(type));

/** How deep a delivery's JSON may nest: an event is a few levels; 20,000 (64 KiB of brackets) overflows the stack writing it. */
const MAX_DEPTH = 32;

/** Whether `v` nests deeper than `max` levels (looks no deeper than that). */
const deeperThan = (v: unknown, max: number): boolean => typeof v === 'object' && v !== null && (max === 0 || Object.values(v).some((x) => deeperThan(x, max - 1)));

const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/** An id the service gave: a non-empty string no longer than MAX_ID_LENGTH, else 400. (NUL never gets this far: see parseJsonObject.) */
function idOf(name: string, v: unknown): string | undefined {
  const id = nonEmpty(v);
  if (id !== undefined && id.length > MAX_ID_LENGTH) throw new RelayProblem('bad_request', `The event's ${name} is over ${MAX_ID_LENGTH} characters`);
  return id;
}

/**
 * What makes a delivery this event, from what the signature covers: the event's own id in the
 * body, else the body's hash. Never a header: a captured delivery resent with a new header is
 * still the same event.
 */
function eventIdOf(body: Record<string, unknown>, raw: string): string {
  const own = idOf('id', body.id) ?? idOf('event_id', body.event_id);
  return own ? `id:${own}` : `sha256:${createHash('sha256').update(raw).digest('hex')}`;
}

/**
 * `POST /v1/webhooks/payments`: the service's events, in either spelling. Each is acted on once
 * however often it is delivered, and only while fresh; a delivery already accepted gets 200 at
 * any age. Without a secret, deliveries are refused unless `allowUnsigned`.
 */
export function webhooksRoute(events: EventLog, hub: EventHub, logger: Logger, limiter: RateLimiter, o: WebhookOptions) {
  const toleranceMs = (o.toleranceSeconds ?? DEFAULTS.webhookToleranceSeconds) * 1000;
  const secrets = webhookSecrets(o.secret);
  const unsigned = secrets.length === 0;
  if (unsigned && o.allowUnsigned)
    logger.warn({ event: 'webhooks_unsigned' }, 'WEBHOOKS ARE UNAUTHENTICATED: no WEBHOOK_SECRET, unsigned deliveries allowed; only the service must reach /v1/webhooks/payments');
  else if (unsigned) logger.error({ event: 'webhooks_refused' }, 'NO WEBHOOK_SECRET: every webhook delivery is refused (401); ramp purchases will not reach players');
  return new Hono<RelayEnv>().post('/', async (c) => {
    // Without a secret every unique delivery is a database write: limit who can make them.
    rateLimited(limiter, addressScope(c, 'webhook'));
    const raw = await readText(c, MAX_WEBHOOK_BYTES);
    if (unsigned && !o.allowUnsigned) {
      logger.warn({ event: 'webhook_refused', reason: 'no_secret' });
      throw new RelayProblem('webhook_unauthorized', 'The relay has no webhook secret: it takes no deliveries');
    }
    const signature = c.req.header(o.signatureHeader ?? DEFAULT_SIGNATURE_HEADER);
    if (!unsigned && !secrets.some((secret) => signatureValid(secret, raw, signature))) {
      logger.warn({ event: 'webhook_refused', reason: 'bad_signature' });
      throw new RelayProblem('webhook_unauthorized', 'Bad or missing webhook signature');
    }
    const body = parseJsonObject(raw);
    if (deeperThan(body, MAX_DEPTH)) throw new RelayProblem('bad_request', `An event nests no deeper than ${MAX_DEPTH} levels`);
    const type = idOf('type', body.type) ?? idOf('event', body.event);
    if (!type || typeof body.data !== 'object' || body.data === null || Array.isArray(body.data)) {
      throw new RelayProblem('bad_request', 'An event has a type (or event) and a data object');
    }
    const at = webhookTimestamp(body);
    const data = body.data as Record<string, unknown>;
    const eventId = eventIdOf(body, raw);
    const referenceId = idOf('reference_id', data.reference_id);
    const kind = kindOf(type);
    // A purchase's amount and currency go to its player as told: checked first, like every other
    // field that is kept or sent on. A bad one is refused before the delivery is recorded, so it
    // changes nothing (the same event, well formed, is new); it is logged, since a real service's
    // delivery refused this way is retried and never reaches the player.
    const purchase = kind === 'completed' ? purchaseAmountOf(data) : {};
    if (typeof purchase === 'string') {
      const shown = (v: unknown) => JSON.stringify(v)?.slice(0, 100);
      logger.warn({ event: 'webhook_refused', reason: 'bad_amount', type, eventId, referenceId, amount: shown(data.amount), currency: shown(data.currency) });
      throw new RelayProblem('bad_request', `A completed purchase has a well-formed amount and currency, or neither: ${purchase}`);
    }
    // A delivery already accepted is a duplicate however old: the service retries what it did
    // not see answered, and a retry after the tolerance must not read as a refusal.
    if (await events.webhookReceived(eventId)) {
      logger.info({ event: 'webhook', type, eventId, referenceId, fresh: false });
      return c.json({ received: true, duplicate: true });
    }
    if (toleranceMs > 0 && at !== undefined && Math.abs(Date.now() - at) > toleranceMs) {
      logger.warn({ event: 'webhook_refused', reason: 'stale', type, at: new Date(at).toISOString() });
      throw new RelayProblem('stale_event', `The event is dated ${new Date(at).toISOString()}, outside the ${toleranceMs / 1000} s tolerance`);
    }
    const playerEvent =
      kind === 'completed'
        ? { type: 'ramp.purchase.completed', data: { ...purchase, referenceId } }
        : kind === 'failed'
          ? { type: 'ramp.purchase.failed', data: { referenceId } }
          : undefined;
    const { fresh, event } = await events.receiveWebhook(eventId, type, referenceId, playerEvent);
    logger.info({ event: 'webhook', type, eventId, referenceId, fresh, userId: event?.userId, kycUserId: kind === 'kycCompleted' ? data.user_id : undefined });
    if (event) hub.publish(event);
    return c.json({ received: true, duplicate: !fresh });
  });
}
