import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { achievementsOf, loadCatalogFile } from './core/catalog.js';
import type { RelayStore } from './core/ports/relay-store.js';
import type { RelayOptions } from './relay.js';
import { fieldsOf, type SameNamedOptions, SETTINGS, type Setting, type SettingFields, sameNamedOptions } from './settings/schema.js';
import { reason, SettingError, SettingsError } from './settings-errors.js';
import type { StoreLog } from './store/postgres/event-log.js';
import { ListenConnectionError, openPgStore, SecretMismatchError } from './store/postgres/store.js';
import { openSqliteStore } from './store/sqlite/store.js';

export { claimLimits } from './settings/claim-limits.js';
export { isHost, isOrigin } from './settings/readers.js';
export { LOG_LEVELS } from './settings/schema.js';
export { SettingError, SettingsError } from './settings-errors.js';

type Settings = typeof SETTINGS;
type Read = { [K in keyof Settings]?: Exclude<ReturnType<Settings[K]['read']>, undefined> };

/** The value `name` is given in `present`: under its own name, else under an older one. */
const given = (present: Record<string, string>, name: string, setting: Setting): string | undefined =>
  present[name] ?? setting.aliases?.map((alias) => present[alias]).find((v) => v !== undefined);

/**
 * Reads every setting present, collecting what is not accepted (each named, in .env.example's
 * order). `schema` is SETTINGS but for tests.
 */
export function readSettings(present: Record<string, string>, schema: Record<string, Setting> = SETTINGS): Read {
  const out: Record<string, unknown> = {};
  const errors: SettingError[] = [];
  for (const [name, setting] of Object.entries(schema)) {
    const raw = given(present, name, setting);
    if (raw === undefined) continue;
    let value: unknown;
    let why: string | undefined;
    try {
      value = setting.read(raw);
    } catch (err) {
      why = reason(err);
    }
    if (value !== undefined) {
      out[name] = value;
      continue;
    }
    const shown = setting.secret ? `${name} (a secret, not shown)` : `${name}=${JSON.stringify(raw)}`;
    // A reader's own reason, but never for a secret: it could quote the value.
    errors.push(new SettingError(name, `${why !== undefined && !setting.secret ? why : `${shown} is not accepted`}: it must be ${setting.accepts}.`));
  }
  if (errors.length) throw new SettingsError(errors);
  return out as Read;
}

/**
 * The relay's settings, read from the environment (see .env.example): every field the schema
 * (settings/schema.ts) defines, at its default when absent, and what loadConfig makes of the rest.
 */
export type RelayConfig = SettingFields & {
  /** Absent: the relay pays through the embedded sandbox. */
  payments?: { apiKey: string; baseUrl: string };
  /** Signs player tokens: comma-separated to rotate, the first signs and all verify. */
  secret: string;
};

/**
 * The relay's settings from `env`. A setting that is not accepted throws a SettingsError whose
 * every line names one setting and what it accepts; nothing is written before that.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): RelayConfig {
  // Empty strings in a .env file mean "not set".
  const present = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
  const e = readSettings(present);
  const fields: { -readonly [K in keyof ReturnType<typeof fieldsOf>]: ReturnType<typeof fieldsOf>[K] } = fieldsOf(e);
  const fail = (setting: string, message: string) => {
    throw new SettingError(setting, message);
  };
  if (!!e.PAYMENTS_API_KEY !== !!e.PAYMENTS_BASE_URL) {
    fail(
      e.PAYMENTS_API_KEY ? 'PAYMENTS_BASE_URL' : 'PAYMENTS_API_KEY',
      `${e.PAYMENTS_API_KEY ? 'PAYMENTS_BASE_URL is missing beside PAYMENTS_API_KEY' : 'PAYMENTS_API_KEY is missing beside PAYMENTS_BASE_URL'}` +
        `: set both to pay for real, or neither to use the embedded sandbox.`,
    );
  }
  const timeoutMs = fields.paymentsTimeoutMs;
  if (fields.paymentLeaseMs !== undefined && fields.paymentLeaseMs <= 2 * timeoutMs) {
    fail(
      'RELAY_PAYMENT_LEASE_MS',
      `RELAY_PAYMENT_LEASE_MS must be longer than two PAYMENTS_TIMEOUT_MS (more than ${2 * timeoutMs}): a live relay must never lose a payment it is still making.`,
    );
  }
  // A price is refreshed every RELAY_PRICE_TTL_SECONDS: allowed to grow older only for less, dollar claims fail between refreshes.
  if (fields.priceMaxAgeSeconds < fields.priceTtlSeconds) {
    fail(
      'RELAY_PRICE_MAX_AGE_SECONDS',
      `RELAY_PRICE_MAX_AGE_SECONDS (${fields.priceMaxAgeSeconds}) is below RELAY_PRICE_TTL_SECONDS (${fields.priceTtlSeconds}): ` +
        'the price is read only that often, so claims in dollars would be refused between reads; set it to at least RELAY_PRICE_TTL_SECONDS.',
    );
  }
  // A day's limit under the smallest withdrawal refuses every withdrawal, every day.
  if (fields.withdrawalDailyLimitSats > 0 && fields.withdrawalDailyLimitSats < fields.minWithdrawalSats) {
    fail(
      'RELAY_WITHDRAWAL_DAILY_LIMIT_SATS',
      `RELAY_WITHDRAWAL_DAILY_LIMIT_SATS (${fields.withdrawalDailyLimitSats}) is below RELAY_MIN_WITHDRAWAL_SATS (${fields.minWithdrawalSats}): ` +
        'no withdrawal could ever be made; set it to at least RELAY_MIN_WITHDRAWAL_SATS (or 0: no daily limit).',
    );
  }
  // The allowance is kept only with a rate per minute of play: a start alone would limit nothing.
  if (fields.withdrawalAllowanceStartSats > 0 && fields.withdrawalAllowancePerPlayMinuteSats === 0) {
    fail(
      'RELAY_WITHDRAWAL_ALLOWANCE_START_SATS',
      `RELAY_WITHDRAWAL_ALLOWANCE_START_SATS (${fields.withdrawalAllowanceStartSats}) is set but RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS is 0: ` +
        'the relay keeps no withdrawal allowance then, so it would limit nothing; set RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS too (or leave the start at 0).',
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
  // Issue 38: a budget and a cap each in sats or in dollars, never both; dollars set, the sats default is off.
  for (const [sats, usd, field] of [
    ['RELAY_DAILY_BUDGET_SATS', 'RELAY_DAILY_BUDGET_USD', 'dailyBudgetSats'],
    ['RELAY_USER_DAILY_CAP_SATS', 'RELAY_USER_DAILY_CAP_USD', 'userDailyCapSats'],
  ] as const) {
    if (e[usd] === undefined) continue;
    if (e[sats] !== undefined) fail(usd, `${usd} and ${sats} are both set: set one or the other (in dollars, each claim counts its dollar value at the price it was decided at).`);
    fields[field] = 0;
  }
  const catalogFile = fields.catalogFile === undefined ? undefined : resolve(fields.catalogFile);
  // Read now, so a bad entry is the first thing said, before the relay writes anything.
  const catalog = catalogFile ? loadCatalogFile(catalogFile) : undefined;
  const needsProof = (catalog ? achievementsOf(catalog) : []).filter((a) => a.proof === 'server').map((a) => a.id);
  if (needsProof.length && !e.RELAY_GAME_SERVER_SECRET) {
    fail('RELAY_GAME_SERVER_SECRET', `RELAY_GAME_SERVER_SECRET is required by RELAY_CATALOG: ${needsProof.join(', ')} ask for a proof signed by the game's server.`);
  }
  const dataDir = resolve(fields.dataDir);
  return {
    ...fields,
    ...(e.PAYMENTS_API_KEY && e.PAYMENTS_BASE_URL ? { payments: { apiKey: e.PAYMENTS_API_KEY, baseUrl: e.PAYMENTS_BASE_URL } } : {}),
    dataDir,
    ...(catalogFile ? { catalogFile } : {}),
    secret: e.RELAY_SECRET ?? keptSecret(dataDir),
  };
}

/**
 * Compiles only if every setting the schema marks `option` names a field of RelayOptions and fits
 * its type: a setting cannot be handed to createRelay under a name it does not read.
 */
type OptionsFit<T extends Partial<RelayOptions> & { [K in Exclude<keyof T, keyof RelayOptions>]: never }> = T;
export type SettingOptions = OptionsFit<SameNamedOptions>;

/**
 * The relay's options from its settings: those RelayOptions takes under the same name (the schema
 * says which), and the few it groups or derives. What the Node shell decides (the payments, the
 * store, the sandbox's stand-ins) it adds itself. The limits a claim is held to are made from
 * them (or from the config itself, by a CLI command) by claimLimits, the same for both.
 */
export function relayOptions(config: RelayConfig) {
  return {
    ...sameNamedOptions(config),
    secret: config.secret,
    ...(config.catalogFile ? { catalog: loadCatalogFile(config.catalogFile) } : {}),
    ...(config.databaseUrl ? { recoverEveryMs: leaseMs(config) / 2 } : {}),
    mode: config.payments ? 'live' : 'sandbox',
    webhooks: { secret: config.webhookSecret, toleranceSeconds: config.webhookToleranceSeconds, allowUnsigned: config.webhookAllowUnsigned },
    streamCaps: { perPlayer: config.streamsPerPlayer, perAddress: config.streamsPerAddress },
  } satisfies Omit<RelayOptions, 'payments'>;
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

/** What to do about a ledger file that will not open: a file that is no database is never the directory's permissions. */
function remedyOf(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT')
    return 'the file is not a SQLite database, or it is damaged. It holds every reward the relay recorded: restore it from a backup (docs/deploy.md#6-backups), never delete it to start over.';
  return 'it must be a directory this user can write.';
}

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
 * `signsTokens: false` (the review and tournament commands): the opener signs no player token, so
 * takes no part in the relays' agreement on RELAY_SECRET, neither checked nor recorded.
 */
export async function openConfiguredStore(config: RelayConfig, logger?: StoreLog, { signsTokens = true } = {}): Promise<RelayStore> {
  if (!config.databaseUrl) {
    try {
      const store = openSqliteStore(ledgerFile(config));
      await store.opened;
      return store;
    } catch (err) {
      throw new SettingError('RELAY_DATA_DIR', `RELAY_DATA_DIR ${config.dataDir}: cannot open the ledger ${ledgerFile(config)} (${reason(err)}): ${remedyOf(err)}`, { cause: err });
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
    const options = { owner, leaseMs: leaseMs(config), ...(signsTokens ? { secrets: config.secret.split(',') } : {}), ...listen, ...(logger ? { logger } : {}) };
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
