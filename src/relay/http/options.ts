import type { Health } from '../../wire/relay-api.js';
import { DEFAULTS } from '../settings/schema.js';
import type { TrustProxy } from './client-address.js';
import type { WebhookOptions } from './routes/webhooks.js';
import type { StreamCapOptions } from './stream-caps.js';

/**
 * The relay's options about its HTTP surface (RelayOptions extends these). The HTTP side is not
 * handed them: the composition root (relay.ts) gives it `httpSettings(options)`, what it reads.
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
  /** Sats paid per client address (IPv6 by /64) per UTC day, every player together; 0: no cap (the default). */
  addressDailyCapSats?: number;
  /** Different players one client address may link per UTC day (429 `too_many_players` past it); 0: no cap (the default). */
  linksPerAddressPerDay?: number;
  /** Reported by /v1/health. Default `live`. */
  mode?: Health['mode'];
  /** The service's webhooks: the signing secret and header names. */
  webhooks?: WebhookOptions;
}

/** A request body's limit (a library option only: no setting names it). */
const MAX_BODY_BYTES = 4096;

/** What the HTTP side reads, its defaults applied: no secret, store or service in it. */
export interface HttpSettings {
  allowedOrigins: readonly string[];
  trustProxy?: TrustProxy | undefined;
  clientAddress?: HttpOptions['clientAddress'];
  streamCaps?: StreamCapOptions | undefined;
  adminToken?: string | undefined;
  adminFailuresPerMinute?: number | undefined;
  maxBodyBytes: number;
  bodyTimeoutMs?: number | undefined;
  mode: Health['mode'];
  webhooks: WebhookOptions;
  /** The per-address limits in force, by their settings' names: a request without a client address passes them, which is warned of. */
  addressLimits: readonly string[];
}

/** The HTTP side's settings from the relay's options. */
export function httpSettings(o: HttpOptions): HttpSettings {
  return {
    allowedOrigins: o.allowedOrigins ?? [],
    trustProxy: o.trustProxy,
    clientAddress: o.clientAddress,
    streamCaps: o.streamCaps,
    adminToken: o.adminToken,
    adminFailuresPerMinute: o.adminFailuresPerMinute,
    maxBodyBytes: o.maxBodyBytes ?? MAX_BODY_BYTES,
    bodyTimeoutMs: o.bodyTimeoutMs,
    mode: o.mode ?? 'live',
    webhooks: o.webhooks ?? {},
    addressLimits: [
      (o.rateLimitPerMinute ?? DEFAULTS.rateLimitPerMinute) > 0 && 'RELAY_RATE_LIMIT_PER_MINUTE',
      (o.linksPerAddressPerDay ?? DEFAULTS.linksPerAddressPerDay) > 0 && 'RELAY_LINKS_PER_ADDRESS_PER_DAY',
      (o.addressDailyCapSats ?? DEFAULTS.addressDailyCapSats) > 0 && 'RELAY_ADDRESS_DAILY_CAP_SATS',
      (o.streamCaps?.perAddress ?? DEFAULTS.streamsPerAddress) > 0 && 'RELAY_STREAMS_PER_ADDRESS',
      (o.webhookRateLimitPerMinute ?? DEFAULTS.webhookRateLimitPerMinute) > 0 && 'RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE',
      o.adminToken !== undefined && 'RELAY_ADMIN_FAILURES_PER_MINUTE',
    ].filter((l): l is string => typeof l === 'string'),
  };
}
