import { parseTrustProxy } from '../../ip-address.js';
import { origins } from '../readers.js';
import type { Setting } from './setting.js';

/** Browsers and proxies: the origins allowed, and whom to believe about a client's address. */
export const BROWSER_SETTINGS = {
  RELAY_ALLOWED_ORIGINS: {
    read: origins,
    accepts: '* (any origin), or origins separated by commas, such as https://game.example.com,http://localhost:5173 (scheme, host and port only: no path, no trailing slash)',
    default: '',
    defaultText: 'same origin only (with the sandbox: any origin)',
    field: 'allowedOrigins',
    option: true,
    group: 'browsers',
    docs:
      'browser origins allowed to call the relay, comma-separated, or `*`. An origin is scheme, host and port as the browser sends it: ' +
      '`https://game.example.com,http://localhost:5173` (no path, no trailing `/`). A call from another origin is logged as `origin_refused`, ' +
      'once per origin per minute',
    help: 'browser origins allowed to call, comma-separated, or *',
  },
  RELAY_TRUST_PROXY: {
    read: parseTrustProxy,
    accepts: "a number of proxy hops (1), or the proxies' IP addresses separated by commas",
    defaultText: "absent (the socket's address)",
    field: 'trustProxy',
    option: true,
    group: 'browsers',
    docs:
      'behind a reverse proxy: the number of hops to trust (`1`) or their addresses (`10.0.0.5,10.0.0.6`). ' +
      "The client's address then comes from `X-Forwarded-For`, which is ignored from anyone else",
    help: 'proxy hops (1) or addresses to believe X-Forwarded-For from',
  },
} as const satisfies Record<string, Setting>;
