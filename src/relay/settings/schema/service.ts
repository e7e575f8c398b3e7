import { DEFAULT_TIMEOUT_MS } from '../../payments/client.js';
import { httpUrl, isHost, token, wholeNumber } from '../readers.js';
import { count, type Setting } from './setting.js';

/** Where the relay listens, the payments service, and how the service reaches the relay. */
export const SERVICE_SETTINGS = {
  PORT: {
    read: wholeNumber(0, 65535),
    accepts: 'a whole number from 0 to 65535 (0: any free port)',
    default: '8787',
    field: 'port',
    group: 'service',
    docs: 'the port; `--port N` overrides it',
    help: 'the port the relay listens on',
  },
  HOST: {
    read: (v: string) => (isHost(v) ? v : undefined),
    accepts: 'an IP address (127.0.0.1, 0.0.0.0, ::1) or a host name (localhost, relay.internal)',
    default: '127.0.0.1',
    field: 'host',
    group: 'service',
    docs: 'the interface, an IP address or host name; `--host H` overrides it',
    help: 'the interface the relay listens on',
  },
  PAYMENTS_API_KEY: {
    read: token,
    accepts: 'the key as the service gave it: visible characters, no spaces or quotes around it',
    secret: true,
    group: 'service',
    docs:
      "the project's API key from the payments service. Absent together with `PAYMENTS_BASE_URL`: the embedded sandbox pays (offline, no real sats), " +
      'and the relay says so at start. Never sent to a client or written to a log',
    help: 'the payments service; with PAYMENTS_BASE_URL, both absent: the embedded sandbox',
  },
  PAYMENTS_BASE_URL: {
    read: httpUrl,
    accepts: 'an http:// or https:// URL, such as https://api.zebedee.io',
    group: 'service',
    docs: "the service's address: `https://api.zebedee.io` for ZBD",
    help: "the payments service's address",
  },
  PAYMENTS_TIMEOUT_MS: {
    ...count('milliseconds, 1 or more', 1),
    default: String(DEFAULT_TIMEOUT_MS),
    field: 'paymentsTimeoutMs',
    group: 'service',
    docs:
      'per call to the service. A payment with no answer by then is `needs_review` and never sent again by itself. ' +
      'On SIGTERM the relay gives requests under way 2 × this + 2 s',
    help: 'per call to the service, in ms',
  },
  RELAY_PUBLIC_URL: {
    read: (v: string) => httpUrl(v)?.replace(/\/$/, ''),
    accepts: 'an http:// or https:// URL, such as https://rewards.example.com',
    defaultText: "required with `PAYMENTS_API_KEY`; on the sandbox, the relay's own address",
    field: 'publicUrl',
    option: true,
    group: 'service',
    docs: 'how the service reaches this relay (the `webhook_url` it is given). Never taken from a request',
    help: 'how the service reaches the relay, for webhook_url (required with a key)',
  },
} as const satisfies Record<string, Setting>;
