import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RampSession } from '../../wire/relay-api.js';
import type { PaymentsClient } from '../payments/client.js';
import type { EventLog } from './ports/event-log.js';
import { Refusal } from './refusal.js';

/** What a player asks the buy-sats widget for (the route has checked its shape). */
export interface RampRequest {
  email: string;
  destination?: string | undefined;
  quoteCurrency?: string | undefined;
  baseCurrency?: string | undefined;
  /** The game's own reference, kept in the session's metadata. */
  referenceId?: string | undefined;
  metadata?: Record<string, string | number | boolean> | undefined;
}

export interface RampDeps {
  payments: Pick<PaymentsClient, 'rampWidget'>;
  events: Pick<EventLog, 'rememberRampSession'>;
  /** The relay's address as the service reaches it, without a trailing slash: its webhooks go there. Without it, no ramp sessions. */
  publicUrl: string | undefined;
  logger: Pick<Logger, 'error' | 'info'>;
}

/** What a player is told when the service refuses a session: our words, never the service's text. */
const REFUSALS: Record<string, string> = {
  INVALID_EMAIL: 'The payments service did not accept this email address',
  INVALID_DESTINATION: 'The payments service did not accept this destination',
};

/**
 * Ramp sessions: a session token for the service's buy-sats widget. The relay sets the reference
 * id itself, so the purchase webhooks can be matched to this player alone, and where they go
 * comes from configuration only: never from the request (its Host header would let anyone have
 * a player's signed webhooks delivered to their own server).
 */
export function createRamp({ payments, events, publicUrl, logger }: RampDeps) {
  return async function openRampSession(userId: string, body: RampRequest): Promise<RampSession> {
    if (!publicUrl) {
      logger.error({ event: 'ramp_unavailable' }, 'ramp sessions need the relay public URL (RELAY_PUBLIC_URL): the service sends its webhooks there');
      throw new Refusal('service_unavailable', 'Ramp sessions are not configured on this relay');
    }
    const referenceId = `rb_${randomUUID()}`;
    const r = await payments.rampWidget({
      email: body.email,
      webhook_url: `${publicUrl}/v1/webhooks/payments`,
      reference_id: referenceId,
      ...(body.destination ? { destination: body.destination } : {}),
      ...(body.quoteCurrency ? { quote_currency: body.quoteCurrency } : {}),
      ...(body.baseCurrency ? { base_currency: body.baseCurrency } : {}),
      metadata: { ...body.metadata, ...(body.referenceId ? { gameReferenceId: body.referenceId } : {}), userId },
    });
    if (r.kind === 'refused' && r.status < 500 && r.status !== 401 && r.status !== 403) {
      logger.info({ event: 'ramp_refused', status: r.status, code: r.code, message: r.message });
      throw new Refusal('bad_request', REFUSALS[r.code ?? ''] ?? 'The payments service did not accept this request');
    }
    if (r.kind !== 'ok') throw new Refusal('service_unavailable', undefined, 5);
    const expiresAt = Date.parse(r.data.expires_at);
    await events.rememberRampSession(referenceId, userId, r.data.session_id, expiresAt);
    return { sessionToken: r.data.session_token, widgetUrl: r.data.widget_url, expiresAt: r.data.expires_at };
  };
}

export type OpenRampSession = ReturnType<typeof createRamp>;
