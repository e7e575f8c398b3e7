import type { Health } from '../../wire/relay-api.js';
import type { TrustProxy } from './client-address.js';
import type { VerifyLink } from './routes/players.js';
import type { WebhookOptions } from './routes/webhooks.js';
import type { StreamCapOptions } from './stream-caps.js';

/**
 * What the HTTP side reads of the relay's options. The composition root (relay.ts) hands them on
 * (its RelayOptions extends these), so nothing here imports it.
 */
export interface HttpOptions {
  /** Origins allowed to call from a browser; `*` for any. Default: none (same origin only). */
  allowedOrigins?: readonly string[];
  /** Per IP and per player; 0 turns it off. Default: RELAY_RATE_LIMIT_PER_MINUTE's (docs/configuration.md). */
  rateLimitPerMinute?: number;
  /** Webhook deliveries per source address; 0 turns it off. Default: RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE's. */
  webhookRateLimitPerMinute?: number;
  /** The proxies to believe about the client's address (X-Forwarded-For). Default: none. */
  trustProxy?: TrustProxy;
  /**
   * The address of whoever sent `request`, where the runtime gives the relay no socket (Bun, Deno,
   * edge runtimes): `env` is what was passed to `relay.fetch(request, env)`. Bun:
   * `(request) => server.requestIP(request)?.address`; Deno: `(request, info) => info.remoteAddr.hostname`
   * with `Deno.serve((req, info) => relay.fetch(req, info))`; Cloudflare: `(request) => request.headers.get('cf-connecting-ip')`.
   * It stands for the socket (`trustProxy` still applies to it); nothing returned: the socket's,
   * if any. Without an address a request passes the per-address limits (the relay warns).
   */
  clientAddress?: (request: Request, env?: unknown) => string | null | undefined;
  /** Open event streams per player and per address (429 past them). Default: RELAY_STREAMS_PER_PLAYER's and RELAY_STREAMS_PER_ADDRESS's. */
  streamCaps?: StreamCapOptions;
  /** Turns on the operator's surface (`/metrics`), for `Authorization: Bearer <adminToken>`. At least 32 characters. */
  adminToken?: string;
  /** Wrong operator tokens per address per minute before it must wait; right ones never count. Default: RELAY_ADMIN_FAILURES_PER_MINUTE's. */
  adminFailuresPerMinute?: number;
  /** Request bodies above this are refused with 413. Default 4 KiB. */
  maxBodyBytes?: number;
  /** A body that takes longer than this to arrive is refused with 408. Default: RELAY_BODY_TIMEOUT_SECONDS's. */
  bodyTimeoutMs?: number;
  /** A human check at link (a captcha's server-side verification): false refuses the link (403 `link_refused`). */
  verifyLink?: VerifyLink;
  /** Sats paid per client address (IPv6 by /64) per UTC day, every player together; 0: no cap (the default). */
  addressDailyCapSats?: number;
  /** Different players one client address may link per UTC day (429 `too_many_players` past it); 0: no cap (the default). */
  linksPerAddressPerDay?: number;
  /** Reported by /v1/health. Default `live`. */
  mode?: Health['mode'];
  /** The service's webhooks: the signing secret and header names. */
  webhooks?: WebhookOptions;
  /** The relay's address as the service reaches it, for webhook_url. Without it, no ramp sessions. */
  publicUrl?: string;
}
