import { BALANCE_SETTINGS } from './schema/balance.js';
import { BOT_DEFENSE_SETTINGS } from './schema/bot-defenses.js';
import { BROWSER_SETTINGS } from './schema/browsers.js';
import { BUDGET_SETTINGS } from './schema/budgets.js';
import { CATALOG_SETTINGS } from './schema/catalog.js';
import { LEDGER_SETTINGS } from './schema/ledger.js';
import { OPERATOR_SETTINGS } from './schema/operator.js';
import { PRICE_SETTINGS } from './schema/prices.js';
import { SERVICE_SETTINGS } from './schema/service.js';
import type { Setting } from './schema/setting.js';
import { WEBHOOK_SETTINGS } from './schema/webhooks.js';

// The settings' schema: each setting is defined in schema/, in the file of its concern; here they
// are put in order, with what every caller reads from them (the defaults, the fields they fill).
export { GROUPS } from './schema/groups.js';
export { LOG_LEVELS } from './schema/operator.js';
export { SANDBOX_SETTINGS } from './schema/sandbox.js';
export type { Setting } from './schema/setting.js';

type Defined = typeof SERVICE_SETTINGS &
  typeof LEDGER_SETTINGS &
  typeof CATALOG_SETTINGS &
  typeof BROWSER_SETTINGS &
  typeof BUDGET_SETTINGS &
  typeof PRICE_SETTINGS &
  typeof BOT_DEFENSE_SETTINGS &
  typeof BALANCE_SETTINGS &
  typeof WEBHOOK_SETTINGS &
  typeof OPERATOR_SETTINGS;

/**
 * Every setting of the relay, in the order of .env.example: the order errors are reported in and
 * `--help` lists them. Adding one is adding its entry to its file in schema/, its name here (the
 * compiler refuses a setting left out) and its line in .env.example; `npm run docs:settings` then
 * writes docs/configuration.md.
 */
export const SETTINGS = {
  PORT: SERVICE_SETTINGS.PORT,
  HOST: SERVICE_SETTINGS.HOST,
  PAYMENTS_API_KEY: SERVICE_SETTINGS.PAYMENTS_API_KEY,
  PAYMENTS_BASE_URL: SERVICE_SETTINGS.PAYMENTS_BASE_URL,
  PAYMENTS_TIMEOUT_MS: SERVICE_SETTINGS.PAYMENTS_TIMEOUT_MS,
  RELAY_DATA_DIR: LEDGER_SETTINGS.RELAY_DATA_DIR,
  RELAY_DATABASE_URL: LEDGER_SETTINGS.RELAY_DATABASE_URL,
  RELAY_DATABASE_LISTEN_URL: LEDGER_SETTINGS.RELAY_DATABASE_LISTEN_URL,
  RELAY_PAYMENT_LEASE_MS: LEDGER_SETTINGS.RELAY_PAYMENT_LEASE_MS,
  RELAY_CATALOG: CATALOG_SETTINGS.RELAY_CATALOG,
  RELAY_SECRET: CATALOG_SETTINGS.RELAY_SECRET,
  RELAY_ALLOWED_ORIGINS: BROWSER_SETTINGS.RELAY_ALLOWED_ORIGINS,
  RELAY_USER_DAILY_CAP_SATS: BUDGET_SETTINGS.RELAY_USER_DAILY_CAP_SATS,
  RELAY_DAILY_BUDGET_SATS: BUDGET_SETTINGS.RELAY_DAILY_BUDGET_SATS,
  RELAY_USER_DAILY_CAP_USD: BUDGET_SETTINGS.RELAY_USER_DAILY_CAP_USD,
  RELAY_DAILY_BUDGET_USD: BUDGET_SETTINGS.RELAY_DAILY_BUDGET_USD,
  RELAY_ADDRESS_DAILY_CAP_SATS: BOT_DEFENSE_SETTINGS.RELAY_ADDRESS_DAILY_CAP_SATS,
  RELAY_LINKS_PER_ADDRESS_PER_DAY: BOT_DEFENSE_SETTINGS.RELAY_LINKS_PER_ADDRESS_PER_DAY,
  RELAY_PRICE_TTL_SECONDS: PRICE_SETTINGS.RELAY_PRICE_TTL_SECONDS,
  RELAY_PRICE_MAX_AGE_SECONDS: PRICE_SETTINGS.RELAY_PRICE_MAX_AGE_SECONDS,
  RELAY_HOLD_ABOVE_SATS: BOT_DEFENSE_SETTINGS.RELAY_HOLD_ABOVE_SATS,
  RELAY_DENIAL_COOLDOWN_HOURS: BOT_DEFENSE_SETTINGS.RELAY_DENIAL_COOLDOWN_HOURS,
  RELAY_PAYOUT_MODE: BALANCE_SETTINGS.RELAY_PAYOUT_MODE,
  RELAY_MIN_WITHDRAWAL_SATS: BALANCE_SETTINGS.RELAY_MIN_WITHDRAWAL_SATS,
  RELAY_WITHDRAWAL_DAILY_LIMIT_SATS: BALANCE_SETTINGS.RELAY_WITHDRAWAL_DAILY_LIMIT_SATS,
  RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS: BALANCE_SETTINGS.RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS,
  RELAY_WITHDRAWAL_ALLOWANCE_START_SATS: BALANCE_SETTINGS.RELAY_WITHDRAWAL_ALLOWANCE_START_SATS,
  RELAY_GAME_SERVER_SECRET: BOT_DEFENSE_SETTINGS.RELAY_GAME_SERVER_SECRET,
  RELAY_RATE_LIMIT_PER_MINUTE: BOT_DEFENSE_SETTINGS.RELAY_RATE_LIMIT_PER_MINUTE,
  WEBHOOK_SECRET: WEBHOOK_SETTINGS.WEBHOOK_SECRET,
  WEBHOOK_ALLOW_UNSIGNED: WEBHOOK_SETTINGS.WEBHOOK_ALLOW_UNSIGNED,
  WEBHOOK_TOLERANCE_SECONDS: WEBHOOK_SETTINGS.WEBHOOK_TOLERANCE_SECONDS,
  RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE: WEBHOOK_SETTINGS.RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE,
  RELAY_BODY_TIMEOUT_SECONDS: BOT_DEFENSE_SETTINGS.RELAY_BODY_TIMEOUT_SECONDS,
  RELAY_STREAMS_PER_PLAYER: BOT_DEFENSE_SETTINGS.RELAY_STREAMS_PER_PLAYER,
  RELAY_STREAMS_PER_ADDRESS: BOT_DEFENSE_SETTINGS.RELAY_STREAMS_PER_ADDRESS,
  RELAY_PUBLIC_URL: SERVICE_SETTINGS.RELAY_PUBLIC_URL,
  RELAY_TRUST_PROXY: BROWSER_SETTINGS.RELAY_TRUST_PROXY,
  RELAY_ADMIN_TOKEN: OPERATOR_SETTINGS.RELAY_ADMIN_TOKEN,
  RELAY_ADMIN_FAILURES_PER_MINUTE: OPERATOR_SETTINGS.RELAY_ADMIN_FAILURES_PER_MINUTE,
  RELAY_WALLET_LOW_SATS: OPERATOR_SETTINGS.RELAY_WALLET_LOW_SATS,
  LOG_LEVEL: OPERATOR_SETTINGS.LOG_LEVEL,
} as const satisfies Record<keyof Defined, Setting>;

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
