import { parseTrustProxy } from '../ip-address.js';
import { DEFAULT_TIMEOUT_MS } from '../payments/client.js';
import { dollars, flag, httpUrl, isHost, oneOf, origins, postgresUrl, secondsAsMs, strongSecrets, text, token, tokenList, wholeNumber } from './readers.js';

/** The levels the logger knows, quietest last. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** The sections of docs/configuration.md, in order: a title, and what holds for every setting in it. */
export const GROUPS = {
  service: { title: 'Where it listens, and the payments service' },
  ledger: { title: 'The ledger' },
  catalog: { title: 'Achievements and player tokens' },
  browsers: { title: 'Browsers and proxies' },
  limits: {
    title: 'Limits and defenses against bots',
    intro:
      'Each bot defense is off at `0` or empty; [threat-model.md](threat-model.md) says what each stops.\n' +
      'Every per-address setting counts an IPv6 client by its /64 and an address however it is spelled\n' +
      '([relay-api.md](relay-api.md#addresses)). Off Node (Bun, Deno, edge runtimes), the library\n' +
      "option `createRelay({ clientAddress(request, env) })` gives the relay the caller's address;\n" +
      'without one, requests pass the per-address limits and the relay warns (`client_address_unknown`).',
  },
  balance: {
    title: 'Balance mode: earn now, withdraw later',
    intro:
      "Off by default (each claim is paid at once). In balance mode a claim is credited to the player's balance, which the\n" +
      'player withdraws from later; guests earn before linking a gamertag ([balance.md](balance.md)).',
  },
  webhooks: { title: 'Webhooks from the payments service' },
  operator: { title: "The operator's side" },
} as const;

/**
 * One setting, defined once: how its text is read, what is accepted (in the words of the error an
 * operator sees), its default, where it goes, and how docs/configuration.md and `--help` say it.
 */
export interface Setting<T = unknown> {
  /** The text to a value; undefined (or a throw, whose message is the reason) when not accepted. */
  read: (value: string) => T | undefined;
  /** Completes "it must be …". */
  accepts: string;
  /** As an operator would write it, read by `read` like any value; absent: the setting is absent. */
  default?: string;
  /** The default in words, for the docs, where it is more than a value (or is computed). */
  defaultText?: string;
  /** Said after the default in the docs: `0` (off). */
  defaultMeans?: string;
  /** The RelayConfig field it fills; absent: loadConfig places it itself. */
  field?: string;
  /** The RelayOptions field of the same name and meaning takes the value as it is. */
  option?: true;
  /** Never echoed back, in errors or anywhere else. */
  secret?: boolean;
  /** Older names still read, when the setting itself is not set. */
  aliases?: readonly string[];
  group: keyof typeof GROUPS;
  /** What it does: the docs' table cell (Markdown, one line). */
  docs: string;
  /** What it does in a few words: `rewardbus-relay --help`. */
  help: string;
}

const count = (what: string, min = 0) => ({ read: wholeNumber(min), accepts: `a whole number${min ? ` from ${min}` : ''} (${what})` });
const secretsToRotate = 'at least 32 characters without spaces';

/**
 * Every setting of the relay, in the order of .env.example: the order errors are reported in.
 * Adding one is adding an entry here (and its line in .env.example); `npm run docs:settings` then
 * writes docs/configuration.md.
 */
export const SETTINGS = {
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
  RELAY_DATA_DIR: {
    read: text,
    accepts: 'a directory',
    default: '.rewardbus',
    field: 'dataDir',
    group: 'ledger',
    docs: 'where the SQLite ledger (`ledger.sqlite`) and the generated token secret live',
    help: 'the ledger and the generated secret',
  },
  RELAY_DATABASE_URL: {
    read: postgresUrl,
    accepts: 'a postgres:// URL, such as postgres://user:password@db.internal/rewardbus',
    secret: true,
    defaultText: 'absent (SQLite)',
    field: 'databaseUrl',
    group: 'ledger',
    docs: '`postgres://user:pass@host/db`: one ledger shared by several relays. Needs `RELAY_SECRET`, the same on every relay. ' + 'The schema is created or migrated at start',
    help: 'postgres://…: a ledger shared by several relays (instead of SQLite)',
  },
  RELAY_DATABASE_LISTEN_URL: {
    read: postgresUrl,
    accepts: 'a postgres:// URL straight to PostgreSQL (or to a pooler in session mode), such as postgres://user:password@db.internal:5432/rewardbus',
    secret: true,
    defaultText: '`RELAY_DATABASE_URL`',
    field: 'databaseListenUrl',
    group: 'ledger',
    docs:
      'a connection straight to PostgreSQL (or through a pooler in session mode) for the work that needs a session of its own: ' +
      "LISTEN (other relays' payouts heard by this relay's streams) and the migrations. One connection per relay. " +
      "Set it when `RELAY_DATABASE_URL` goes through a pooler in transaction mode (PgBouncer's usual default), which drops notifications; " +
      'see [Behind a pooler](deploy.md#behind-a-pooler)',
    help: 'postgres://… straight to PostgreSQL, for LISTEN and migrations (default: RELAY_DATABASE_URL)',
  },
  RELAY_PAYMENT_LEASE_MS: {
    ...count('milliseconds, 1000 or more', 1000),
    defaultText: '2 × `PAYMENTS_TIMEOUT_MS` + 30 s',
    field: 'paymentLeaseMs',
    group: 'ledger',
    docs: "PostgreSQL only: how long a relay's claim on a payment in flight lasts before another relay may recover it. " + 'Longer than two `PAYMENTS_TIMEOUT_MS`',
    help: "with PostgreSQL: a relay's hold on a payment in flight (default: 2 x timeout + 30 s)",
  },
  RELAY_CATALOG: {
    read: text,
    accepts: 'the path of a JSON file of achievements',
    defaultText: 'the built-in demo catalog',
    field: 'catalogFile',
    group: 'catalog',
    docs:
      'a JSON file of achievements: a list, or `{ "achievements": [...] }`. Each entry: `id`, `title`, `sats`, `repeat` ' +
      '(`{ "kind": "once" }`, `{ "kind": "daily" }`, `{ "kind": "cooldown", "seconds": N }` or `{ "kind": "streak", "sats": [10, 20, 30] }`, ' +
      'a login streak, written without `sats`), and optionally `minPlaySeconds`, ' +
      '`"proof": "server"`, `"hold": true`. An error names the entry and the field: `achievements[1] (id "coin-streak"): sats must be at least 1`',
    help: 'a JSON file of achievements (default: the demo catalog)',
  },
  RELAY_SECRET: {
    read: strongSecrets,
    accepts: `${secretsToRotate}; to rotate, several such, separated by commas (the first signs, all verify)`,
    secret: true,
    defaultText: 'generated once and kept in `RELAY_DATA_DIR`',
    group: 'catalog',
    docs:
      "signs player tokens (and the event stream's 60 s tickets); at least 32 characters. `NEW,OLD`: the first signs, every one listed verifies. " +
      'Required with `RELAY_DATABASE_URL`',
    help: 'signs player tokens, 32+ characters (generated); to rotate see docs/deploy.md §7',
  },
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
  RELAY_USER_DAILY_CAP_SATS: {
    ...count('sats; 0: no cap'),
    default: '1000',
    field: 'userDailyCapSats',
    option: true,
    group: 'limits',
    docs: 'sats per player (userId) per UTC day; `0`: no cap',
    help: 'per player per UTC day; 0: none',
  },
  RELAY_DAILY_BUDGET_SATS: {
    ...count('sats; 0: no budget'),
    default: '100000',
    field: 'dailyBudgetSats',
    option: true,
    group: 'limits',
    docs: 'sats for the whole project per UTC day; `0`: no budget',
    help: 'the whole game per UTC day; 0: none',
  },
  // Issue 38: the dollar alternatives to the two above (one or the other for each: both is a start error).
  RELAY_USER_DAILY_CAP_USD: {
    read: dollars,
    accepts: 'dollars, e.g. 0.50 (at most 6 decimals; 0: no cap)',
    defaultText: 'none (`RELAY_USER_DAILY_CAP_SATS` caps)',
    field: 'userDailyCapUsd',
    option: true,
    group: 'limits',
    docs: 'dollars per player (userId) per UTC day, in place of `RELAY_USER_DAILY_CAP_SATS` (set one or the other): each claim counts its dollar value at the price it was decided at; `0`: no cap',
    help: 'per player per UTC day in dollars, in place of the sats cap',
  },
  RELAY_DAILY_BUDGET_USD: {
    read: dollars,
    accepts: 'dollars, e.g. 25 (at most 6 decimals; 0: no budget)',
    defaultText: 'none (`RELAY_DAILY_BUDGET_SATS` budgets)',
    field: 'dailyBudgetUsd',
    option: true,
    group: 'limits',
    docs: 'dollars for the whole project per UTC day, in place of `RELAY_DAILY_BUDGET_SATS` (set one or the other): each claim counts its dollar value (its `usd`, or its sats at the price it was decided at), so it buys as many $0.05 rewards at any price; `0`: no budget',
    help: 'the whole game per UTC day in dollars, in place of the sats budget',
  },
  RELAY_ADDRESS_DAILY_CAP_SATS: {
    ...count('sats per client address (IPv6 by /64) per UTC day, every player together; 0: no cap'),
    default: '0',
    defaultMeans: 'off',
    field: 'addressDailyCapSats',
    option: true,
    group: 'limits',
    docs: 'sats per client address (IPv6 by /64) per UTC day, every player together; refusals say `address_daily_cap`',
    help: 'per client address per UTC day, every player together; 0: none',
  },
  RELAY_LINKS_PER_ADDRESS_PER_DAY: {
    ...count('different players one client address may link per UTC day; 0: no cap'),
    default: '0',
    defaultMeans: 'off',
    field: 'linksPerAddressPerDay',
    option: true,
    group: 'limits',
    docs: 'different gamertags one address may link per UTC day; past it, `429 too_many_players` until the next UTC day',
    help: 'different players one address may link per UTC day; 0: no cap',
  },
  RELAY_PRICE_TTL_SECONDS: {
    ...count('seconds between reads of the BTC/USD price', 1),
    default: '60',
    field: 'priceTtlSeconds',
    option: true,
    group: 'limits',
    docs: 'with achievements priced in dollars (`"usd"`) or a dollar budget or cap: the BTC/USD price is read from the payments service this often, in the background (never on a payout\'s path)',
    help: 'how often the BTC/USD price is read (with dollar prices)',
  },
  RELAY_PRICE_MAX_AGE_SECONDS: {
    ...count('seconds a BTC/USD price may be used for', 1),
    default: '600',
    field: 'priceMaxAgeSeconds',
    option: true,
    group: 'limits',
    docs:
      'a price older than this refuses claims priced in dollars with `503 price_unavailable` and `Retry-After` (claims priced in sats go on); ' +
      'at least `RELAY_PRICE_TTL_SECONDS` (below it is a start error: claims in dollars would fail between reads)',
    help: 'older, dollar-priced claims are refused (503 price_unavailable)',
  },
  RELAY_HOLD_ABOVE_SATS: {
    ...count("sats above which a claim waits for an operator's approval; 0: none"),
    default: '0',
    defaultMeans: 'off',
    field: 'holdAboveSats',
    option: true,
    group: 'limits',
    docs: 'a claim worth more waits for an operator (status `held`). Catalog entries can also say `"hold": true`',
    help: "claims worth more wait for an operator's approval; 0: none",
  },
  RELAY_DENIAL_COOLDOWN_HOURS: {
    ...count("hours an operator's denial refuses the same player's claims of the same achievement; 0: off"),
    default: '24',
    field: 'denialCooldownHours',
    option: true,
    group: 'limits',
    docs:
      "after an operator denies a held claim, the same player's claims of the same achievement are refused for this many hours " +
      '(`denied_recently`: nothing held, nothing sent); `0`: off',
    help: "after a denial, that player's claims of that achievement are refused; 0: off",
  },
  RELAY_PAYOUT_MODE: {
    read: oneOf(['instant', 'balance'] as const),
    accepts: "instant (each claim paid at once) or balance (credited to the player's balance, withdrawn later)",
    default: 'instant',
    field: 'payoutMode',
    option: true,
    group: 'balance',
    docs:
      "`instant`: each claim is paid at once. `balance`: credited to the player's balance (`GET /v1/balance`)," +
      ' withdrawn with `POST /v1/withdrawals`; an achievement\'s own `"payout"` wins',
    help: 'instant, or balance: claims credited to a balance the player withdraws from',
  },
  RELAY_MIN_WITHDRAWAL_SATS: {
    ...count('the smallest withdrawal from a balance', 1),
    default: '100',
    field: 'minWithdrawalSats',
    option: true,
    group: 'balance',
    docs: 'the smallest withdrawal (`422 below_minimum` under it)',
    help: 'the smallest withdrawal from a balance',
  },
  RELAY_WITHDRAWAL_DAILY_LIMIT_SATS: {
    ...count('sats a player may withdraw per UTC day; 0: no daily limit'),
    default: '0',
    defaultMeans: 'off',
    field: 'withdrawalDailyLimitSats',
    option: true,
    group: 'balance',
    docs: "what a player may withdraw per UTC day: the Earn SDK's most important fraud control, best set from day one; at least `RELAY_MIN_WITHDRAWAL_SATS`",
    help: 'sats a player may withdraw per UTC day; 0: no limit',
  },
  RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS: {
    ...count("sats a player's withdrawal allowance grows per minute of witnessed play; 0: no allowance"),
    default: '0',
    defaultMeans: 'off',
    field: 'withdrawalAllowancePerPlayMinuteSats',
    option: true,
    group: 'balance',
    docs: "the withdrawal allowance grows by this per minute of witnessed play (heartbeats `POST /v1/play`) and by the game server's raises",
    help: 'sats the withdrawal allowance grows per minute of play; 0: no allowance',
  },
  RELAY_WITHDRAWAL_ALLOWANCE_START_SATS: {
    ...count("a player's withdrawal allowance before any play"),
    default: '0',
    field: 'withdrawalAllowanceStartSats',
    option: true,
    group: 'balance',
    docs: 'the allowance before any play; only with `RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS` (alone it is a start error: there is no allowance without it)',
    help: 'the withdrawal allowance before any play',
  },
  RELAY_GAME_SERVER_SECRET: {
    read: strongSecrets,
    accepts: `${secretsToRotate}, shared with the game's server; to rotate, several such, separated by commas (the first is current, all verify)`,
    secret: true,
    field: 'gameServerSecret',
    option: true,
    group: 'limits',
    docs:
      'shared with the game\'s server: checks the unlock proofs of achievements with `"proof": "server"` ([unlock-proofs.md](unlock-proofs.md)). ' +
      'At least 32 characters; `NEW,OLD` to rotate',
    help: "checks unlock proofs signed by the game's server (32+ characters); NEW,OLD to rotate",
  },
  RELAY_RATE_LIMIT_PER_MINUTE: {
    ...count('requests; 0: off'),
    default: '60',
    field: 'rateLimitPerMinute',
    option: true,
    group: 'limits',
    docs: 'requests per minute per address and per player; `0`: off. Each relay counts on its own',
    help: 'per address and per player; 0: off',
  },
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
  RELAY_BODY_TIMEOUT_SECONDS: {
    read: secondsAsMs(1),
    accepts: 'a whole number from 1 (seconds a request body may take to arrive, 1 or more)',
    default: '10',
    field: 'bodyTimeoutMs',
    option: true,
    group: 'limits',
    docs: 'a request body must arrive within this; a slower one is answered 408 and its socket closed',
    help: 'a request body must arrive within this, in seconds',
  },
  RELAY_STREAMS_PER_PLAYER: {
    ...count('open event streams per player; 0: no cap'),
    default: '5',
    field: 'streamsPerPlayer',
    group: 'limits',
    docs: 'open event streams per player (429 past it); `0`: no cap',
    help: 'open event streams per player; 0: no cap',
  },
  RELAY_STREAMS_PER_ADDRESS: {
    ...count('open event streams per client address; 0: no cap'),
    default: '20',
    field: 'streamsPerAddress',
    group: 'limits',
    docs: 'open event streams per client address (429 past it); `0`: no cap',
    help: 'open event streams per client address; 0: no cap',
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
      'Right tokens never count, so a scraper is never locked out. 1 or more',
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

type Settings = typeof SETTINGS;
type ValueOf<S> = S extends { read: (v: string) => infer T } ? Exclude<T, undefined> : never;
type FieldOf<S> = S extends { field: infer F extends string } ? F : never;
type Defaulted<S> = S extends { default: string } ? true : false;

/** The fields that have a default: every caller of createRelay and loadConfig gets the same. */
export type Defaults = { [K in keyof Settings as Defaulted<Settings[K]> extends true ? FieldOf<Settings[K]> : never]: ValueOf<Settings[K]> };
/** The fields the settings fill: each defaulted field always, the others when set. */
export type SettingFields = Defaults & { [K in keyof Settings as Defaulted<Settings[K]> extends true ? never : FieldOf<Settings[K]>]?: ValueOf<Settings[K]> };
/** The fields RelayOptions takes under the same name and meaning. */
export type SameNamedOptions = { [K in keyof Settings as Settings[K] extends { option: true } ? FieldOf<Settings[K]> : never]?: ValueOf<Settings[K]> };

const entries = Object.entries(SETTINGS) as [keyof Settings, Setting][];

/** Every default, read as the environment's text would be (RELAY_BODY_TIMEOUT_SECONDS=10 is bodyTimeoutMs 10000). */
export const DEFAULTS = Object.fromEntries(entries.flatMap(([, s]) => (s.field && s.default !== undefined ? [[s.field, s.read(s.default)]] : []))) as Defaults;

/** The fields of settings read (by environment name), each absent one at its default. */
export function fieldsOf(read: Partial<Record<keyof Settings, unknown>>): SettingFields {
  const out: Record<string, unknown> = {};
  for (const [name, s] of entries) {
    if (!s.field) continue;
    const value = read[name] ?? (s.default !== undefined ? s.read(s.default) : undefined);
    if (value !== undefined) out[s.field] = value;
  }
  return out as SettingFields;
}

/** What RelayOptions takes as it is from the fields (a RelayConfig): the rest is the caller's to map. */
export function sameNamedOptions(fields: Partial<SettingFields>): SameNamedOptions {
  const out: Record<string, unknown> = {};
  for (const [, s] of entries) {
    const value = s.field && (fields as Record<string, unknown>)[s.field];
    if ('option' in s && s.option && value !== undefined) out[s.field!] = value;
  }
  return out as SameNamedOptions;
}
