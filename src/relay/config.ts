import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { loadCatalogFile } from './core/catalog.js';
import type { RelayStore } from './core/ports/relay-store.js';
import { parseTrustProxy, type TrustProxy } from './http/client-address.js';
import { reason, SettingError, SettingsError } from './settings-errors.js';
import type { StoreLog } from './store/postgres/event-log.js';
import { ListenConnectionError, openPgStore, SecretMismatchError } from './store/postgres/store.js';
import { openSqliteStore } from './store/sqlite/store.js';

export { SettingError, SettingsError } from './settings-errors.js';

/** The levels the logger knows, quietest last. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/**
 * One setting: how to read it, and what is accepted, in the words of the error an operator sees.
 * `read` returns undefined when the value is not accepted. Secrets are never echoed back.
 */
interface Setting<T> {
  read: (value: string) => T | undefined;
  accepts: string;
  secret?: boolean;
}

const wholeNumber =
  (min: number, max = Number.MAX_SAFE_INTEGER) =>
  (v: string) => {
    if (!/^\d+$/.test(v.trim())) return undefined;
    const n = Number(v.trim());
    return n >= min && n <= max ? n : undefined;
  };
const httpUrl = (v: string) => {
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !/\s/.test(v) ? v : undefined;
  } catch {
    return undefined;
  }
};
/** Visible ASCII, no spaces: what a key pasted with a stray newline or quote is not. */
const token = (v: string) => (/^[\x21-\x7e]+$/.test(v) ? v : undefined);
/** Comma-separated secrets (the first signs, all verify), each at least 32 visible characters. */
const secretList = (v: string) => {
  const list = v.split(',').map((s) => s.trim());
  return list.every((s) => s.length >= 32 && /^[\x21-\x2b\x2d-\x7e]+$/.test(s)) ? list : undefined;
};

/** An IP address, or a host name as DNS spells one (a name cannot end in a number: 999.1.1.1 is neither). */
export function isHost(v: string): boolean {
  if (isIP(v)) return true;
  const labels = v.replace(/\.$/, '').split('.');
  return v.length <= 253 && labels.every((l) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(l)) && !/^\d+$/.test(labels.at(-1)!);
}

/**
 * A browser origin as browsers send it: scheme and host, a port only when not the default, no
 * path, no trailing slash, lowercase (an origin spelled otherwise would never match). Schemes
 * other than http(s) (capacitor://localhost, app://game) are taken as written.
 */
export function isOrigin(v: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#\s@]+$/.test(v)) return false;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin === v : true;
  } catch {
    return false;
  }
}

function postgresUrl(v: string): string | undefined {
  try {
    return /^postgres(ql)?:\/\/./.test(v) && new URL(v).hostname ? v : undefined;
  } catch {
    return undefined;
  }
}

const count = (what: string, min = 0) => ({ read: wholeNumber(min), accepts: `a whole number${min ? ` from ${min}` : ''} (${what})` });

/** Every setting, in the order of .env.example: the order errors are reported in. */
const SETTINGS = {
  PORT: { read: wholeNumber(0, 65535), accepts: 'a whole number from 0 to 65535 (0: any free port)' },
  HOST: { read: (v: string) => (isHost(v) ? v : undefined), accepts: 'an IP address (127.0.0.1, 0.0.0.0, ::1) or a host name (localhost, relay.internal)' },
  PAYMENTS_API_KEY: { read: token, accepts: 'the key as the service gave it: visible characters, no spaces or quotes around it', secret: true },
  PAYMENTS_BASE_URL: { read: httpUrl, accepts: 'an http:// or https:// URL, such as https://api.zebedee.io' },
  PAYMENTS_TIMEOUT_MS: count('milliseconds, 1 or more', 1),
  RELAY_DATA_DIR: { read: (v: string) => v, accepts: 'a directory' },
  RELAY_DATABASE_URL: {
    read: postgresUrl,
    accepts: 'a postgres:// URL, such as postgres://user:password@db.internal/rewardbus',
    secret: true,
  },
  RELAY_DATABASE_LISTEN_URL: {
    read: postgresUrl,
    accepts: 'a postgres:// URL straight to PostgreSQL (or to a pooler in session mode), such as postgres://user:password@db.internal:5432/rewardbus',
    secret: true,
  },
  RELAY_PAYMENT_LEASE_MS: count('milliseconds, 1000 or more', 1000),
  RELAY_CATALOG: { read: (v: string) => v, accepts: 'the path of a JSON file of achievements' },
  RELAY_SECRET: { read: secretList, accepts: 'at least 32 characters without spaces; to rotate, several such, separated by commas (the first signs, all verify)', secret: true },
  RELAY_ALLOWED_ORIGINS: {
    read: (v: string) => {
      const list = v
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean);
      return list.every((o) => o === '*' || isOrigin(o)) ? list : undefined;
    },
    accepts: '* (any origin), or origins separated by commas, such as https://game.example.com,http://localhost:5173 (scheme, host and port only: no path, no trailing slash)',
  },
  RELAY_USER_DAILY_CAP_SATS: count('sats; 0: no cap'),
  RELAY_DAILY_BUDGET_SATS: count('sats; 0: no budget'),
  RELAY_ADDRESS_DAILY_CAP_SATS: count('sats per client address (IPv6 by /64) per UTC day, every player together; 0: no cap'),
  RELAY_LINKS_PER_ADDRESS_PER_DAY: count('different players one client address may link per UTC day; 0: no cap'),
  RELAY_HOLD_ABOVE_SATS: count("sats above which a claim waits for an operator's approval; 0: none"),
  RELAY_DENIAL_COOLDOWN_HOURS: count("hours an operator's denial refuses the same player's claims of the same achievement; 0: off"),
  RELAY_PAYOUT_MODE: {
    read: (v: string) => (v === 'instant' || v === 'balance' ? v : undefined),
    accepts: "instant (each claim paid at once) or balance (credited to the player's balance, withdrawn later)",
  },
  RELAY_MIN_WITHDRAWAL_SATS: count('the smallest withdrawal from a balance', 1),
  RELAY_WITHDRAWAL_DAILY_LIMIT_SATS: count('sats a player may withdraw per UTC day; 0: no daily limit'),
  RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS: count("sats a player's withdrawal allowance grows per minute of witnessed play; 0: no allowance"),
  RELAY_WITHDRAWAL_ALLOWANCE_START_SATS: count("a player's withdrawal allowance before any play"),
  RELAY_GAME_SERVER_SECRET: {
    read: secretList,
    accepts: "at least 32 characters without spaces, shared with the game's server; to rotate, several such, separated by commas (the first is current, all verify)",
    secret: true,
  },
  RELAY_RATE_LIMIT_PER_MINUTE: count('requests; 0: off'),
  RELAY_ADMIN_FAILURES_PER_MINUTE: count('wrong operator tokens per address before it must wait; 1 or more', 1),
  WEBHOOK_SECRET: {
    read: (v: string) => (v.split(',').every((s) => token(s.trim())) ? v : undefined),
    accepts: 'the signing secret as the service gave it: visible characters, no spaces or quotes around it',
    secret: true,
  },
  WEBHOOK_ALLOW_UNSIGNED: {
    read: (v: string) => (v === '1' || v === 'true' ? true : v === '0' || v === 'false' ? false : undefined),
    accepts: '1 (take unsigned deliveries: only behind something that checks them) or 0',
  },
  WEBHOOK_TOLERANCE_SECONDS: count('seconds; 0: no check'),
  RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE: count('deliveries; 0: off'),
  RELAY_BODY_TIMEOUT_SECONDS: count('seconds a request body may take to arrive, 1 or more', 1),
  RELAY_STREAMS_PER_PLAYER: count('open event streams per player; 0: no cap'),
  RELAY_STREAMS_PER_ADDRESS: count('open event streams per client address; 0: no cap'),
  RELAY_PUBLIC_URL: { read: httpUrl, accepts: 'an http:// or https:// URL, such as https://rewards.example.com' },
  RELAY_TRUST_PROXY: { read: (v: string) => v, accepts: "a number of proxy hops (1), or the proxies' IP addresses separated by commas" },
  RELAY_ADMIN_TOKEN: { read: secretList, accepts: 'at least 32 characters without spaces; to rotate, several such, separated by commas (all are accepted)', secret: true },
  RELAY_WALLET_LOW_SATS: count("sats in the project wallet below which the operator is warned; default: one day's budget"),
  LOG_LEVEL: { read: (v: string) => ((LOG_LEVELS as readonly string[]).includes(v) ? (v as (typeof LOG_LEVELS)[number]) : undefined), accepts: `one of ${LOG_LEVELS.join(', ')}` },
} satisfies Record<string, Setting<unknown>>;

type Settings = typeof SETTINGS;
type Read = { [K in keyof Settings]?: Exclude<ReturnType<Settings[K]['read']>, undefined> };

/** Reads every setting present, collecting what is not accepted (each named, in .env.example's order). */
function readSettings(present: Record<string, string>): Read {
  const out: Record<string, unknown> = {};
  const errors: SettingError[] = [];
  for (const [name, setting] of Object.entries(SETTINGS) as [keyof Settings, Setting<unknown>][]) {
    const raw = present[name];
    if (raw === undefined) continue;
    const value = setting.read(raw);
    if (value !== undefined) {
      out[name] = value;
      continue;
    }
    const given = setting.secret ? `${name} (a secret, not shown)` : `${name}=${JSON.stringify(raw)}`;
    errors.push(new SettingError(name, `${given} is not accepted: it must be ${setting.accepts}.`));
  }
  if (errors.length) throw new SettingsError(errors);
  return out as Read;
}

/** The relay's settings, read from the environment (see .env.example). */
export interface RelayConfig {
  port: number;
  host: string;
  /** Absent: the relay pays through the embedded sandbox. */
  payments?: { apiKey: string; baseUrl: string };
  paymentsTimeoutMs: number;
  dataDir: string;
  catalogFile?: string;
  /** Signs player tokens: comma-separated to rotate, the first signs and all verify. */
  secret: string;
  allowedOrigins: string[];
  userDailyCapSats: number;
  dailyBudgetSats: number;
  /** Sats per client address per UTC day; 0: no cap. */
  addressDailyCapSats: number;
  /** Different players one address may link per UTC day; 0: no cap. */
  linksPerAddressPerDay: number;
  /** Claims worth more wait for an operator; 0: none. */
  holdAboveSats: number;
  /** Hours a denial refuses the same player's claims of the same achievement (`denied_recently`); 0: off. */
  denialCooldownHours: number;
  /** instant: each claim paid at once; balance: credited to the player's balance. */
  payoutMode: 'instant' | 'balance';
  minWithdrawalSats: number;
  withdrawalDailyLimitSats: number;
  withdrawalAllowancePerPlayMinuteSats: number;
  withdrawalAllowanceStartSats: number;
  /** Checks unlock proofs (comma-separated: the first current, all verify). */
  gameServerSecret?: string;
  rateLimitPerMinute: number;
  /** Wrong operator tokens per address per minute before it must wait (successes never count). */
  adminFailuresPerMinute: number;
  webhookSecret?: string;
  /** Takes unsigned webhook deliveries when there is no secret (live mode refuses them otherwise). */
  webhookAllowUnsigned: boolean;
  /** A request body must have arrived within this. */
  bodyTimeoutMs: number;
  /** Open event streams per player and per address; 0: no cap. */
  streamsPerPlayer: number;
  streamsPerAddress: number;
  /** Below this the project wallet is low; absent: one day's budget. */
  walletLowSats?: number;
  /** An event dated further than this from now is refused; 0: no check. */
  webhookToleranceSeconds: number;
  webhookRateLimitPerMinute: number;
  /** How the service reaches the relay (webhook_url). Required with a key; the sandbox's is the relay's own address. */
  publicUrl?: string;
  trustProxy?: TrustProxy;
  /** PostgreSQL, shared by several relays; absent: SQLite in dataDir. */
  databaseUrl?: string;
  /** With databaseUrl: a direct (or session-mode) connection for LISTEN and the migrations; absent: databaseUrl. */
  databaseListenUrl?: string;
  /** On a shared ledger, how long a relay's claim on a payment in flight lasts (see leaseMs). */
  paymentLeaseMs?: number;
  /** Turns on /admin and /metrics: comma-separated to rotate, all accepted. */
  adminToken?: string;
  logLevel: (typeof LOG_LEVELS)[number];
}

/**
 * The relay's settings from `env`. A setting that is not accepted throws a SettingsError whose
 * every line names one setting and what it accepts; nothing is written before that.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): RelayConfig {
  // Empty strings in a .env file mean "not set".
  const present = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
  const e = readSettings(present);
  const fail = (setting: string, message: string, cause?: unknown) => {
    throw new SettingError(setting, message, { cause });
  };
  if (!!e.PAYMENTS_API_KEY !== !!e.PAYMENTS_BASE_URL) {
    fail(
      e.PAYMENTS_API_KEY ? 'PAYMENTS_BASE_URL' : 'PAYMENTS_API_KEY',
      `${e.PAYMENTS_API_KEY ? 'PAYMENTS_BASE_URL is missing beside PAYMENTS_API_KEY' : 'PAYMENTS_API_KEY is missing beside PAYMENTS_BASE_URL'}: set both to pay for real, or neither to use the embedded sandbox.`,
    );
  }
  const timeoutMs = e.PAYMENTS_TIMEOUT_MS ?? 10_000;
  if (e.RELAY_PAYMENT_LEASE_MS !== undefined && e.RELAY_PAYMENT_LEASE_MS <= 2 * timeoutMs) {
    fail(
      'RELAY_PAYMENT_LEASE_MS',
      `RELAY_PAYMENT_LEASE_MS must be longer than two PAYMENTS_TIMEOUT_MS (more than ${2 * timeoutMs}): a live relay must never lose a payment it is still making.`,
    );
  }
  if (e.RELAY_DATABASE_LISTEN_URL && !e.RELAY_DATABASE_URL) {
    fail('RELAY_DATABASE_LISTEN_URL', 'RELAY_DATABASE_LISTEN_URL is set without RELAY_DATABASE_URL: it is the session connection beside the database of RELAY_DATABASE_URL.');
  }
  if (e.RELAY_DATABASE_URL && !e.RELAY_SECRET) {
    fail('RELAY_SECRET', 'RELAY_SECRET is required with RELAY_DATABASE_URL: every relay on the database must sign player tokens with the same secret.');
  }
  if (e.PAYMENTS_API_KEY && !e.RELAY_PUBLIC_URL) {
    fail('RELAY_PUBLIC_URL', 'RELAY_PUBLIC_URL is required with PAYMENTS_API_KEY: it is where the payments service sends its webhooks (never taken from a request).');
  }
  let trustProxy: TrustProxy | undefined;
  try {
    if (e.RELAY_TRUST_PROXY) trustProxy = parseTrustProxy(e.RELAY_TRUST_PROXY);
  } catch (err) {
    fail('RELAY_TRUST_PROXY', `${reason(err)}: it must be ${SETTINGS.RELAY_TRUST_PROXY.accepts}.`, err);
  }
  const catalogFile = e.RELAY_CATALOG ? resolve(e.RELAY_CATALOG) : undefined;
  // Read now, so a bad entry is the first thing said, before the relay writes anything.
  const catalog = catalogFile ? loadCatalogFile(catalogFile) : undefined;
  const needsProof = [...(catalog?.values() ?? [])].filter((a) => a.proof === 'server').map((a) => a.id);
  if (needsProof.length && !e.RELAY_GAME_SERVER_SECRET) {
    fail('RELAY_GAME_SERVER_SECRET', `RELAY_GAME_SERVER_SECRET is required by RELAY_CATALOG: ${needsProof.join(', ')} ask for a proof signed by the game's server.`);
  }
  const dataDir = resolve(e.RELAY_DATA_DIR ?? '.rewardbus');
  return {
    port: e.PORT ?? 8787,
    host: e.HOST ?? '127.0.0.1',
    ...(e.PAYMENTS_API_KEY && e.PAYMENTS_BASE_URL ? { payments: { apiKey: e.PAYMENTS_API_KEY, baseUrl: e.PAYMENTS_BASE_URL } } : {}),
    paymentsTimeoutMs: timeoutMs,
    dataDir,
    ...(catalogFile ? { catalogFile } : {}),
    secret: e.RELAY_SECRET ? e.RELAY_SECRET.join(',') : keptSecret(dataDir),
    allowedOrigins: e.RELAY_ALLOWED_ORIGINS ?? [],
    userDailyCapSats: e.RELAY_USER_DAILY_CAP_SATS ?? 1000,
    dailyBudgetSats: e.RELAY_DAILY_BUDGET_SATS ?? 100_000,
    addressDailyCapSats: e.RELAY_ADDRESS_DAILY_CAP_SATS ?? 0,
    linksPerAddressPerDay: e.RELAY_LINKS_PER_ADDRESS_PER_DAY ?? 0,
    holdAboveSats: e.RELAY_HOLD_ABOVE_SATS ?? 0,
    denialCooldownHours: e.RELAY_DENIAL_COOLDOWN_HOURS ?? 24,
    payoutMode: e.RELAY_PAYOUT_MODE ?? 'instant',
    minWithdrawalSats: e.RELAY_MIN_WITHDRAWAL_SATS ?? 100,
    withdrawalDailyLimitSats: e.RELAY_WITHDRAWAL_DAILY_LIMIT_SATS ?? 0,
    withdrawalAllowancePerPlayMinuteSats: e.RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS ?? 0,
    withdrawalAllowanceStartSats: e.RELAY_WITHDRAWAL_ALLOWANCE_START_SATS ?? 0,
    ...(e.RELAY_GAME_SERVER_SECRET ? { gameServerSecret: e.RELAY_GAME_SERVER_SECRET.join(',') } : {}),
    rateLimitPerMinute: e.RELAY_RATE_LIMIT_PER_MINUTE ?? 60,
    adminFailuresPerMinute: e.RELAY_ADMIN_FAILURES_PER_MINUTE ?? 10,
    ...(e.WEBHOOK_SECRET ? { webhookSecret: e.WEBHOOK_SECRET } : {}),
    webhookAllowUnsigned: e.WEBHOOK_ALLOW_UNSIGNED ?? false,
    webhookToleranceSeconds: e.WEBHOOK_TOLERANCE_SECONDS ?? 300,
    bodyTimeoutMs: (e.RELAY_BODY_TIMEOUT_SECONDS ?? 10) * 1000,
    streamsPerPlayer: e.RELAY_STREAMS_PER_PLAYER ?? 5,
    streamsPerAddress: e.RELAY_STREAMS_PER_ADDRESS ?? 20,
    ...(e.RELAY_WALLET_LOW_SATS !== undefined ? { walletLowSats: e.RELAY_WALLET_LOW_SATS } : {}),
    webhookRateLimitPerMinute: e.RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE ?? 600,
    ...(e.RELAY_PUBLIC_URL ? { publicUrl: e.RELAY_PUBLIC_URL.replace(/\/$/, '') } : {}),
    ...(trustProxy ? { trustProxy } : {}),
    ...(e.RELAY_DATABASE_URL ? { databaseUrl: e.RELAY_DATABASE_URL } : {}),
    ...(e.RELAY_DATABASE_URL && e.RELAY_DATABASE_LISTEN_URL ? { databaseListenUrl: e.RELAY_DATABASE_LISTEN_URL } : {}),
    ...(e.RELAY_PAYMENT_LEASE_MS ? { paymentLeaseMs: e.RELAY_PAYMENT_LEASE_MS } : {}),
    ...(e.RELAY_ADMIN_TOKEN ? { adminToken: e.RELAY_ADMIN_TOKEN.join(',') } : {}),
    logLevel: e.LOG_LEVEL ?? 'info',
  };
}

/** A generated token secret, kept in the data dir so player tokens survive a restart. */
function keptSecret(dataDir: string): string {
  const file = join(dataDir, 'relay-secret');
  try {
    if (existsSync(file)) return readFileSync(file, 'utf8').trim();
    mkdirSync(dataDir, { recursive: true });
    const secret = randomBytes(32).toString('base64url');
    writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (err) {
    throw new SettingError(
      'RELAY_DATA_DIR',
      `RELAY_DATA_DIR ${dataDir} cannot hold the relay's files (${reason(err)}): it must be a directory this user can create and write, or set RELAY_SECRET.`,
      { cause: err },
    );
  }
}

export const ledgerFile = (config: RelayConfig): string => join(config.dataDir, 'ledger.sqlite');

/**
 * How long a relay's claim on a payment in flight lasts on a shared ledger: past both calls to
 * the service (lookup, payment) with room to spare. After it, another relay may recover it.
 */
export const leaseMs = (config: RelayConfig): number => config.paymentLeaseMs ?? 2 * config.paymentsTimeoutMs + 30_000;

/** How long to wait for PostgreSQL to answer at start before saying RELAY_DATABASE_URL is out of reach. */
const DATABASE_WAIT_MS = 15_000;

/**
 * The store configuration picks: PostgreSQL with RELAY_DATABASE_URL, else SQLite in the data
 * dir. Failing to open it throws a SettingError naming the setting (never the password).
 */
export async function openConfiguredStore(config: RelayConfig, logger?: StoreLog): Promise<RelayStore> {
  if (!config.databaseUrl) {
    try {
      const store = openSqliteStore(ledgerFile(config));
      await store.opened;
      return store;
    } catch (err) {
      throw new SettingError(
        'RELAY_DATA_DIR',
        `RELAY_DATA_DIR ${config.dataDir}: cannot open the ledger ${ledgerFile(config)} (${reason(err)}): it must be a directory this user can write.`,
        { cause: err },
      );
    }
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${DATABASE_WAIT_MS / 1000} s`)), DATABASE_WAIT_MS);
    timer.unref();
  });
  try {
    const owner = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    const listen = config.databaseListenUrl ? { listenUrl: config.databaseListenUrl } : {};
    const options = { owner, leaseMs: leaseMs(config), secrets: config.secret.split(','), ...listen, ...(logger ? { logger } : {}) };
    return await Promise.race([openPgStore(config.databaseUrl, options), late]);
  } catch (err) {
    if (err instanceof SecretMismatchError) throw new SettingError('RELAY_SECRET', err.message, { cause: err });
    // The listen connection is opened first (the migrations run on it): by default it is RELAY_DATABASE_URL's.
    const onListen = err instanceof ListenConnectionError && config.databaseListenUrl !== undefined;
    const [setting, url] = onListen ? ['RELAY_DATABASE_LISTEN_URL', config.databaseListenUrl!] : ['RELAY_DATABASE_URL', config.databaseUrl];
    const what = onListen ? 'the listen connection (LISTEN, migrations) to' : 'the PostgreSQL database';
    const why = reason(err instanceof ListenConnectionError ? err.cause : err);
    // PgBouncer's words for a startup parameter it does not pass on (`options` in the URL, PGOPTIONS).
    if (/unsupported startup parameter/i.test(why)) {
      throw new SettingError(
        setting,
        `${setting}: the connection pooler at ${databaseAddress(url)} refused a startup parameter (${why}): remove it from the URL (?options=…) or PGOPTIONS, ` +
          'or let the pooler ignore it (PgBouncer: ignore_startup_parameters). The relay sends none of its own.',
        { cause: err },
      );
    }
    const message = `${setting}: cannot open ${what} ${databaseAddress(url)} (${why}): check that the server runs there and accepts this user and password.`;
    throw new SettingError(setting, message, { cause: err });
  } finally {
    clearTimeout(timer);
  }
}

/** user@host:port/database, without the password. */
function databaseAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.host}${u.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}
