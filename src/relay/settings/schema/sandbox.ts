/**
 * What `rewardbus-relay sandbox` reads: the emulated service alone, not the relay (no field, no
 * option; documented with the relay's settings).
 */
export const SANDBOX_SETTINGS = {
  SANDBOX_PORT: { default: '8788', docs: 'its port, when none is given on the command line', help: 'the port of the sandbox alone' },
  SANDBOX_API_KEY: {
    default: 'sandbox-dev-key',
    docs: 'the `apikey` it accepts; several, comma-separated, all accepted',
    help: 'the key the sandbox alone accepts; several, comma-separated',
  },
  SANDBOX_WEBHOOK_SECRET: {
    docs:
      'signs its ramp webhooks and withdrawal callbacks (`X-ZBD-Signature: sha256=<hex HMAC-SHA256 of the raw body>`);' +
      " give it the relay's `WEBHOOK_SECRET` (a `NEW,OLD` list signs with the first); none: unsigned",
    help: "the sandbox alone signs its webhooks with it (the relay's WEBHOOK_SECRET)",
  },
} as const;
