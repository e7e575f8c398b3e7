import { createHmac } from 'node:crypto';
import { DEFAULT_SIGNATURE_HEADER } from '../contract/payments-api.js';

/**
 * POSTs a raw JSON body as the service does: signed, when there is a secret, with
 * `X-ZBD-Signature: sha256=<hex HMAC-SHA256 of the raw body>` (the scheme the relay verifies).
 * Once, no retries. The receiver's status, or 0 when it could not be reached or took over 10 s.
 */
export async function postSigned(url: string, secret: string | undefined, raw: string): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (secret) headers[DEFAULT_SIGNATURE_HEADER] = `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
  try {
    const res = await fetch(url, { method: 'POST', headers, body: raw, signal: AbortSignal.timeout(10_000) });
    await res.body?.cancel();
    return res.status;
  } catch {
    return 0;
  }
}
