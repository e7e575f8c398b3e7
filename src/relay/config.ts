import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { hostname } from 'node:os';
import { parseTrustProxy, type TrustProxy } from './http/client-address.js';
import type { RelayStore } from './store/relay-store.js';
import { openPgStore } from './store/postgres/store.js';
import { openSqliteStore } from './store/sqlite/store.js';

const int = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().default('127.0.0.1'),
  PAYMENTS_API_KEY: z.string().min(1).optional(),
  PAYMENTS_BASE_URL: z.url().optional(),
  PAYMENTS_TIMEOUT_MS: int(10_000),
  RELAY_DATA_DIR: z.string().default('.rewardbus'),
  RELAY_CATALOG: z.string().optional(),
  RELAY_SECRET: z.string().min(32, 'RELAY_SECRET must be at least 32 characters').optional(),
  RELAY_ALLOWED_ORIGINS: z.string().default(''),
  RELAY_USER_DAILY_CAP_SATS: int(1000),
  RELAY_DAILY_BUDGET_SATS: int(100_000),
  RELAY_RATE_LIMIT_PER_MINUTE: int(60),
  WEBHOOK_SECRET: z.string().min(1).optional(),
  WEBHOOK_TOLERANCE_SECONDS: int(300),
  RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE: int(600),
  RELAY_PUBLIC_URL: z.url().optional(),
  RELAY_TRUST_PROXY: z.string().optional(),
  RELAY_ADMIN_TOKEN: z.string().min(32, 'RELAY_ADMIN_TOKEN must be at least 32 characters').optional(),
  RELAY_PAYMENT_LEASE_MS: z.coerce.number().int().min(1000).optional(),
  RELAY_DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'RELAY_DATABASE_URL is a postgres:// URL').optional(),
});

/** The relay's settings, read from the environment (see .env.example). */
export interface RelayConfig {
  port: number;
  host: string;
  /** Absent: the relay pays through the embedded sandbox. */
  payments?: { apiKey: string; baseUrl: string };
  paymentsTimeoutMs: number;
  dataDir: string;
  catalogFile?: string;
  secret: string;
  allowedOrigins: string[];
  userDailyCapSats: number;
  dailyBudgetSats: number;
  rateLimitPerMinute: number;
  webhookSecret?: string;
  /** An event dated further than this from now is refused; 0: no check. */
  webhookToleranceSeconds: number;
  webhookRateLimitPerMinute: number;
  /** How the service reaches the relay (webhook_url). Required with a key; the sandbox's is the relay's own address. */
  publicUrl?: string;
  trustProxy?: TrustProxy;
  /** PostgreSQL, shared by several relays; absent: SQLite in dataDir. */
  databaseUrl?: string;
  /** On a shared ledger, how long a relay's claim on a payment in flight lasts (see leaseMs). */
  paymentLeaseMs?: number;
  /** Turns on /metrics (and the operator's page to come). */
  adminToken?: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): RelayConfig {
  // Empty strings in a .env file mean "not set".
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) throw new Error(`Invalid configuration: ${z.prettifyError(parsed.error)}`);
  const e = parsed.data;
  if (!!e.PAYMENTS_API_KEY !== !!e.PAYMENTS_BASE_URL) {
    throw new Error('Set both PAYMENTS_API_KEY and PAYMENTS_BASE_URL to pay for real, or neither to use the embedded sandbox.');
  }
  if (e.RELAY_PAYMENT_LEASE_MS !== undefined && e.RELAY_PAYMENT_LEASE_MS <= 2 * e.PAYMENTS_TIMEOUT_MS) {
    throw new Error('RELAY_PAYMENT_LEASE_MS must be longer than two PAYMENTS_TIMEOUT_MS: a live relay must never lose a payment it is still making.');
  }
  if (e.RELAY_DATABASE_URL && !e.RELAY_SECRET) {
    throw new Error('RELAY_SECRET is required with RELAY_DATABASE_URL: every relay on the database must sign player tokens with the same secret.');
  }
  if (e.PAYMENTS_API_KEY && !e.RELAY_PUBLIC_URL) {
    throw new Error('RELAY_PUBLIC_URL is required with PAYMENTS_API_KEY: it is where the payments service sends its webhooks (never taken from a request).');
  }
  const dataDir = resolve(e.RELAY_DATA_DIR);
  return {
    port: e.PORT,
    host: e.HOST,
    ...(e.PAYMENTS_API_KEY && e.PAYMENTS_BASE_URL ? { payments: { apiKey: e.PAYMENTS_API_KEY, baseUrl: e.PAYMENTS_BASE_URL } } : {}),
    paymentsTimeoutMs: e.PAYMENTS_TIMEOUT_MS,
    dataDir,
    ...(e.RELAY_CATALOG ? { catalogFile: resolve(e.RELAY_CATALOG) } : {}),
    secret: e.RELAY_SECRET ?? keptSecret(dataDir),
    allowedOrigins: e.RELAY_ALLOWED_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean),
    userDailyCapSats: e.RELAY_USER_DAILY_CAP_SATS,
    dailyBudgetSats: e.RELAY_DAILY_BUDGET_SATS,
    rateLimitPerMinute: e.RELAY_RATE_LIMIT_PER_MINUTE,
    ...(e.WEBHOOK_SECRET ? { webhookSecret: e.WEBHOOK_SECRET } : {}),
    webhookToleranceSeconds: e.WEBHOOK_TOLERANCE_SECONDS,
    webhookRateLimitPerMinute: e.RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE,
    ...(e.RELAY_PUBLIC_URL ? { publicUrl: e.RELAY_PUBLIC_URL.replace(/\/$/, '') } : {}),
    ...(e.RELAY_TRUST_PROXY ? { trustProxy: parseTrustProxy(e.RELAY_TRUST_PROXY) } : {}),
    ...(e.RELAY_DATABASE_URL ? { databaseUrl: e.RELAY_DATABASE_URL } : {}),
    ...(e.RELAY_PAYMENT_LEASE_MS ? { paymentLeaseMs: e.RELAY_PAYMENT_LEASE_MS } : {}),
    ...(e.RELAY_ADMIN_TOKEN ? { adminToken: e.RELAY_ADMIN_TOKEN } : {}),
  };
}

/** A generated token secret, kept in the data dir so player tokens survive a restart. */
function keptSecret(dataDir: string): string {
  const file = join(dataDir, 'relay-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
  return secret;
}

export const ledgerFile = (config: RelayConfig): string => join(config.dataDir, 'ledger.sqlite');

/**
 * How long a relay's claim on a payment in flight lasts on a shared ledger: past both calls to
 * the service (lookup, payment) with room to spare. After it, another relay may recover it.
 */
export const leaseMs = (config: RelayConfig): number => config.paymentLeaseMs ?? 2 * config.paymentsTimeoutMs + 30_000;

/** The store configuration picks: PostgreSQL with RELAY_DATABASE_URL, else SQLite in the data dir. */
export async function openConfiguredStore(config: RelayConfig): Promise<RelayStore> {
  if (!config.databaseUrl) {
    const store = openSqliteStore(ledgerFile(config));
    await store.opened;
    return store;
  }
  return openPgStore(config.databaseUrl, { owner: `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`, leaseMs: leaseMs(config) });
}
