import { flag, tokenList } from '../readers.js';
import { count, type Setting } from './setting.js';

/** Webhooks from the payments service: their signatures, their age, their rate. */
export const WEBHOOK_SETTINGS = {
  WEBHOOK_SECRET: {
    read: tokenList,
    accepts: 'the signing secret as the service gave it: visible characters, no spaces or quotes around it',
    secret: true,
    field: 'webhookSecret',
    group: 'webhooks',
    docs:
      "verifies the service's webhook signatures (`X-ZBD-Signature`, HMAC-SHA256 of the raw body). Required in live mode: " +
      'without it every delivery is refused (401) and the relay logs `NO WEBHOOK_SECRET: every webhook delivery is refused (401); ' +
      'ramp purchases will not reach players` at start. `NEW,OLD` to rotate',
    help: "verifies the service's webhook signatures",
  },
  WEBHOOK_ALLOW_UNSIGNED: {
    read: flag,
    accepts: '1 (take unsigned deliveries: only behind something that checks them) or 0',
    default: '0',
    field: 'webhookAllowUnsigned',
    group: 'webhooks',
    docs: "`1`: take unsigned deliveries when `WEBHOOK_SECRET` is empty. Only behind something that checks them (an allowlist of the service's addresses)",
    help: '1: take unsigned deliveries without WEBHOOK_SECRET',
  },
  WEBHOOK_TOLERANCE_SECONDS: {
    ...count('seconds; 0: no check'),
    default: '300',
    field: 'webhookToleranceSeconds',
    group: 'webhooks',
    docs: 'an event dated further than this from now is refused as a replay; `0`: no check',
    help: 'refuses webhook events dated further from now; 0: off',
  },
  RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE: {
    ...count('deliveries; 0: off'),
    default: '600',
    field: 'webhookRateLimitPerMinute',
    option: true,
    group: 'webhooks',
    docs: 'webhook deliveries per minute per source address; `0`: off',
    help: 'webhook deliveries per source address; 0: off',
  },
} as const satisfies Record<string, Setting>;
