import type { Context } from 'hono';
import type { Envelope } from '../contract/payments-api.js';

/** `{ success: true, message, data }`, the service's `/v0` envelope. */
export const ok = <T>(c: Context, message: string, data: T): Response => c.json({ success: true, message, data } satisfies Envelope<T>);

/** `{ success: false, message }` with the service's status. */
export const fail = (c: Context, status: 400 | 401 | 404 | 409 | 422 | 500 | 503, message: string): Response =>
  c.json({ success: false, message } satisfies Envelope<never>, status);

/** The request's JSON body when it is an object, else undefined. */
export async function jsonBody(c: Context): Promise<Record<string, unknown> | undefined> {
  try {
    const body: unknown = await c.req.json();
    return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An optional field as the service reads it: `null` and `""` mean "not given", as clients other
 * than @zbd/node send them (zebedee for Python: `"internalId": null`, `"callbackUrl": ""`).
 */
export const given = (v: unknown): unknown => (v === null || v === '' ? undefined : v);
