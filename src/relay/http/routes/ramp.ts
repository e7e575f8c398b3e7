import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { RampSession } from '../../../wire/relay-api.js';
import type { EventLog } from '../../core/ports/event-log.js';
import type { PaymentsClient } from '../../payments/client.js';
import { type RelayEnv, readJson } from '../context.js';
import { RelayProblem } from '../problems.js';

const rampSchema = z.strictObject({
  email: z.email(),
  destination: z.string().min(1).max(200).optional(),
  quoteCurrency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .optional(),
  baseCurrency: z
    .string()
    .regex(/^[A-Z]{3,4}$/)
    .optional(),
  referenceId: z.string().min(1).max(100).optional(),
  metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

/** What a player is told when the service refuses a session: our words, never the service's text. */
const REFUSALS: Record<string, string> = {
  INVALID_EMAIL: 'The payments service did not accept this email address',
  INVALID_DESTINATION: 'The payments service did not accept this destination',
};

/**
 * `POST /v1/ramp-sessions`: a session token for the service's buy-sats widget. The relay sets
 * the reference id itself, so the purchase webhooks can be matched to this player alone, and
 * where they go comes from configuration only: never from the request (its Host header would
 * let anyone have a player's signed webhooks delivered to their own server).
 */
export function rampRoute(payments: PaymentsClient, events: EventLog, publicUrl: string | undefined, logger: Logger) {
  return new Hono<RelayEnv>().post('/', async (c) => {
    const player = c.get('player');
    const body = await readJson(c, rampSchema);
    if (!publicUrl) {
      logger.error({ event: 'ramp_unavailable' }, 'ramp sessions need the relay public URL (RELAY_PUBLIC_URL): the service sends its webhooks there');
      throw new RelayProblem('service_unavailable', 'Ramp sessions are not configured on this relay');
    }
    const referenceId = `rb_${randomUUID()}`;
    const r = await payments.rampWidget({
      email: body.email,
      webhook_url: `${publicUrl}/v1/webhooks/payments`,
      reference_id: referenceId,
      ...(body.destination ? { destination: body.destination } : {}),
      ...(body.quoteCurrency ? { quote_currency: body.quoteCurrency } : {}),
      ...(body.baseCurrency ? { base_currency: body.baseCurrency } : {}),
      metadata: { ...body.metadata, ...(body.referenceId ? { gameReferenceId: body.referenceId } : {}), userId: player.userId },
    });
    if (r.kind === 'refused' && r.status < 500 && r.status !== 401 && r.status !== 403) {
      logger.info({ event: 'ramp_refused', status: r.status, code: r.code, message: r.message });
      throw new RelayProblem('bad_request', REFUSALS[r.code ?? ''] ?? 'The payments service did not accept this request');
    }
    if (r.kind !== 'ok') throw new RelayProblem('service_unavailable', undefined, { 'Retry-After': '5' });
    const expiresAt = Date.parse(r.data.expires_at);
    await events.rememberRampSession(referenceId, player.userId, r.data.session_id, expiresAt);
    return c.json({ sessionToken: r.data.session_token, widgetUrl: r.data.widget_url, expiresAt: r.data.expires_at } satisfies RampSession, 201);
  });
}
