import { randomUUID } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { RAMP_ERRORS, RAMP_SESSION_TTL_MS, type RampAnswer, type RampSessionData } from '../contract/payments-api.js';
import { given } from './answers.js';

/** A ramp session as the sandbox keeps it: what it answered, and what its widget needs later. */
export interface RampSessionRecord extends RampSessionData {
  /** Absent when the caller gave none (the official ramp client makes it optional): no webhooks then. */
  webhookUrl?: string;
  referenceId?: string;
  /** One of the two: the player's e-mail or an access token from the service's own login. */
  email?: string;
  accessToken?: string;
  destination?: string;
  quoteCurrency?: string;
  baseCurrency?: string;
  metadata?: Record<string, unknown>;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
// Loose on purpose: a lightning address, LNURL, invoice or Bitcoin address; no spaces.
const DESTINATION = /^\S{1,200}$/;
const CURRENCY = /^[A-Z]{3,4}$/;

/** A ramp error in the envelope the official ramp client declares: `data` null, `error` set. */
export function rampError(c: Context, status: 400 | 401 | 404, code: string, message: string) {
  return c.json({ success: false, message, data: null, error: { code, message } } satisfies RampAnswer<never>, status);
}

const isHttpUrl = (u: string) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol);

/** `POST /api/v1/ramp-widget`: a session token for the buy-sats widget, or a ramp error. */
export function mountRampSessions(app: Hono, sessions: Map<string, RampSessionRecord>, publicUrl: string) {
  app.post('/api/v1/ramp-widget', async (c) => {
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = await c.req.json();
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new TypeError('not an object');
      body = parsed as Record<string, unknown>;
    } catch {
      return rampError(c, 400, RAMP_ERRORS.invalidRequest, 'Request body must be a JSON object');
    }
    // Optional fields sent as null or "" are not given (see `given`); for the two that identify the
    // player only null is: an empty e-mail or token is still a wrong one.
    const [email, access_token] = [body.email ?? undefined, body.access_token ?? undefined];
    const [webhook_url, destination, quote_currency, base_currency, reference_id] = (
      ['webhook_url', 'destination', 'quote_currency', 'base_currency', 'reference_id'] as const
    ).map((k) => given(body[k]));
    const metadata = body.metadata ?? undefined;
    // The spec asks for an e-mail; the official client sends an access token instead when it has one.
    if (access_token !== undefined && (typeof access_token !== 'string' || access_token === '')) {
      return rampError(c, 400, RAMP_ERRORS.invalidAccessToken, 'access_token must be a non-empty string');
    }
    if ((email !== undefined || access_token === undefined) && (typeof email !== 'string' || !EMAIL.test(email))) {
      return rampError(c, 400, RAMP_ERRORS.invalidEmail, 'A valid email (or an access_token) is required');
    }
    if (webhook_url !== undefined && (typeof webhook_url !== 'string' || !isHttpUrl(webhook_url))) {
      return rampError(c, 400, RAMP_ERRORS.invalidWebhookUrl, 'webhook_url must be an http(s) URL');
    }
    if (destination !== undefined && (typeof destination !== 'string' || !DESTINATION.test(destination))) {
      return rampError(c, 400, RAMP_ERRORS.invalidDestination, 'destination must be a lightning or Bitcoin address');
    }
    for (const [name, value] of [
      ['quote_currency', quote_currency],
      ['base_currency', base_currency],
    ] as const) {
      if (value !== undefined && (typeof value !== 'string' || !CURRENCY.test(value))) {
        return rampError(c, 400, RAMP_ERRORS.invalidCurrency, `${name} must be a currency code such as USD or BTC`);
      }
    }
    const sessionId = randomUUID();
    const session: RampSessionRecord = {
      session_token: `rst_${randomUUID().replaceAll('-', '')}`,
      session_id: sessionId,
      widget_url: `${publicUrl}/widget/${sessionId}`,
      expires_at: new Date(Date.now() + RAMP_SESSION_TTL_MS).toISOString(),
      ...(typeof webhook_url === 'string' ? { webhookUrl: webhook_url } : {}),
      ...(typeof email === 'string' ? { email } : {}),
      ...(typeof access_token === 'string' ? { accessToken: access_token } : {}),
      ...(typeof reference_id === 'string' ? { referenceId: reference_id } : {}),
      ...(typeof destination === 'string' ? { destination } : {}),
      ...(typeof quote_currency === 'string' ? { quoteCurrency: quote_currency } : {}),
      ...(typeof base_currency === 'string' ? { baseCurrency: base_currency } : {}),
      ...(metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata) ? { metadata: metadata as Record<string, unknown> } : {}),
    };
    sessions.set(sessionId, session);
    const { session_token, widget_url, session_id, expires_at } = session;
    return c.json({
      success: true,
      message: 'Ramp session created.',
      data: { session_token, widget_url, session_id, expires_at },
      error: null,
    } satisfies RampAnswer<RampSessionData>);
  });
}
