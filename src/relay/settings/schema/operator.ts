import { oneOf, strongSecrets } from '../readers.js';
import { count, type Setting, secretsToRotate } from './setting.js';

/** The levels the logger knows, quietest last. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** The operator's side: the admin page and its token, the wallet warning, the log. */
export const OPERATOR_SETTINGS = {
  RELAY_ADMIN_TOKEN: {
    read: strongSecrets,
    accepts: `${secretsToRotate}; to rotate, several such, separated by commas (all are accepted)`,
    secret: true,
    defaultText: 'absent (with `npm start` on the sandbox: a token made for the run, printed at start)',
    field: 'adminToken',
    option: true,
    group: 'operator',
    docs:
      'turns on the page at `/admin`, its API under `/admin/api` and `/metrics`, for `Authorization: Bearer <token>`. ' +
      'At least 32 characters; `NEW,OLD` (both accepted) to rotate. Absent: all three answer 404',
    help: "turns on /admin (the operator's page) and /metrics (32+ characters); NEW,OLD to rotate",
  },
  RELAY_ADMIN_FAILURES_PER_MINUTE: {
    ...count('wrong operator tokens per address before it must wait; 1 or more', 1),
    default: '10',
    field: 'adminFailuresPerMinute',
    option: true,
    group: 'operator',
    docs:
      'wrong operator tokens per address per minute; past it that address waits (429) until the minute is out. ' +
      'Right tokens never count, so a scraper never locks itself out (it waits too if it shares the address). 1 or more',
    help: 'wrong operator tokens per address before it waits',
  },
  RELAY_WALLET_LOW_SATS: {
    ...count("sats in the project wallet below which the operator is warned; default: one day's budget"),
    defaultText: "one day's budget (`RELAY_DAILY_BUDGET_SATS`)",
    field: 'walletLowSats',
    option: true,
    group: 'operator',
    docs: "below this many sats in the project wallet, the log (`wallet_low`) and the operator's page warn",
    help: "warn below this project wallet balance (default: one day's budget)",
  },
  LOG_LEVEL: {
    read: oneOf(LOG_LEVELS),
    accepts: `one of ${LOG_LEVELS.join(', ')}`,
    default: 'info',
    field: 'logLevel',
    group: 'operator',
    docs: '`trace`, `debug`, `info`, `warn`, `error` (or `fatal`, `silent`)',
    help: 'trace, debug, info, warn, error',
  },
} as const satisfies Record<string, Setting>;
