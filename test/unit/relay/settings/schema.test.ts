import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, readSettings, relayOptions } from '../../../../src/relay/config.js';
import { wholeNumber } from '../../../../src/relay/settings/readers.js';
import { DEFAULTS, SETTINGS, type Setting } from '../../../../src/relay/settings/schema.js';
import { SettingsError } from '../../../../src/relay/settings-errors.js';

const SECRET = 'a-relay-secret-of-at-least-32-characters';
const catalogFile = join(mkdtempSync(join(tmpdir(), 'rewardbus-settings-')), 'catalog.json');
writeFileSync(catalogFile, JSON.stringify([{ id: 'boss', title: 'Boss', sats: 50, repeat: { kind: 'once' } }]));

describe('the settings schema', () => {
  it("reads every default with the setting's own reader: a default it would refuse from an operator fails here", () => {
    for (const [name, s] of Object.entries(SETTINGS) as [string, Setting][]) {
      if (s.default !== undefined) expect(s.read(s.default), name).not.toBeUndefined();
    }
    expect(DEFAULTS).toMatchObject({ userDailyCapSats: 1000, dailyBudgetSats: 100_000, rateLimitPerMinute: 60, webhookRateLimitPerMinute: 600, paymentsTimeoutMs: 10_000 });
    // The environment's unit, read into the option's: RELAY_BODY_TIMEOUT_SECONDS=10 is 10 000 ms.
    expect(DEFAULTS.bodyTimeoutMs).toBe(10_000);
  });

  it('gives the environment loader and library callers the same defaults', () => {
    const config = loadConfig({ RELAY_SECRET: SECRET });
    expect({ ...config, dataDir: DEFAULTS.dataDir }).toMatchObject(DEFAULTS);
    expect(config.dataDir).toBe(resolve(DEFAULTS.dataDir));
  });

  it('fills a field from its setting, in the unit the option takes', () => {
    const config = loadConfig({ RELAY_SECRET: SECRET, RELAY_BODY_TIMEOUT_SECONDS: '3', RELAY_USER_DAILY_CAP_SATS: '0', RELAY_PUBLIC_URL: 'https://r.example.com/' });
    expect(config).toMatchObject({ bodyTimeoutMs: 3000, userDailyCapSats: 0, publicUrl: 'https://r.example.com' });
  });
});

describe('readSettings', () => {
  const schema: Record<string, Setting> = {
    FIRST: { read: wholeNumber(1), accepts: 'a whole number from 1', group: 'limits', docs: '', help: '' },
    KEY: { read: (v) => (v.length > 3 ? v : undefined), accepts: 'more than 3 characters', secret: true, group: 'limits', docs: '', help: '' },
    THROWS: {
      read: () => {
        throw new Error('THROWS: no such thing');
      },
      accepts: 'nothing',
      group: 'limits',
      docs: '',
      help: '',
    },
    RENAMED: { read: (v) => v, accepts: 'anything', aliases: ['OLD_NAME'], group: 'limits', docs: '', help: '' },
    HIDDEN: {
      read: (v) => {
        throw new Error(`HIDDEN: ${v} is wrong`);
      },
      accepts: 'a secret',
      secret: true,
      group: 'limits',
      docs: '',
      help: '',
    },
  };

  it("names every setting not accepted, in the schema's order, never showing a secret; a reader's throw is its reason", () => {
    let error: unknown;
    try {
      readSettings({ THROWS: 'x', KEY: 'abc', FIRST: '0' }, schema);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SettingsError);
    const errors = (error as SettingsError).errors;
    expect(errors.map((e) => e.setting)).toEqual(['FIRST', 'KEY', 'THROWS']);
    expect(errors.map((e) => e.message)).toEqual([
      'FIRST="0" is not accepted: it must be a whole number from 1.',
      'KEY (a secret, not shown) is not accepted: it must be more than 3 characters.',
      'THROWS: no such thing: it must be nothing.',
    ]);
  });

  it("never quotes a secret, even in its reader's reason", () => {
    expect(() => readSettings({ HIDDEN: 'hunter2-hunter2' }, schema)).toThrow('HIDDEN (a secret, not shown) is not accepted: it must be a secret.');
  });

  it('reads an older name when the setting itself is not set, and the new name over it', () => {
    expect(readSettings({ OLD_NAME: 'old' }, schema)).toEqual({ RENAMED: 'old' });
    expect(readSettings({ OLD_NAME: 'old', RENAMED: 'new' }, schema)).toEqual({ RENAMED: 'new' });
  });
});

describe('relayOptions', () => {
  // Read by the Node shell (where to listen, which store, which payments, the logger), not by createRelay.
  const SHELL = ['PORT', 'HOST', 'PAYMENTS_API_KEY', 'PAYMENTS_BASE_URL', 'PAYMENTS_TIMEOUT_MS', 'RELAY_DATA_DIR', 'RELAY_DATABASE_LISTEN_URL', 'LOG_LEVEL'];
  // A value other than the default for each setting that createRelay reads.
  const CHANGED: Record<string, string> = {
    RELAY_DATABASE_URL: 'postgres://u@db.internal/r',
    RELAY_PAYMENT_LEASE_MS: '90000',
    RELAY_CATALOG: catalogFile,
    RELAY_SECRET: `${SECRET}-2`,
    RELAY_ALLOWED_ORIGINS: 'https://game.example.com',
    RELAY_USER_DAILY_CAP_SATS: '7',
    RELAY_DAILY_BUDGET_SATS: '7',
    RELAY_USER_DAILY_CAP_USD: '0.07',
    RELAY_DAILY_BUDGET_USD: '7',
    RELAY_PRICE_TTL_SECONDS: '7',
    RELAY_PRICE_MAX_AGE_SECONDS: '700',
    RELAY_ADDRESS_DAILY_CAP_SATS: '7',
    RELAY_LINKS_PER_ADDRESS_PER_DAY: '7',
    RELAY_HOLD_ABOVE_SATS: '7',
    RELAY_DENIAL_COOLDOWN_HOURS: '7',
    RELAY_PAYOUT_MODE: 'balance',
    RELAY_MIN_WITHDRAWAL_SATS: '7',
    // At least the default RELAY_MIN_WITHDRAWAL_SATS (100): under it, a start error.
    RELAY_WITHDRAWAL_DAILY_LIMIT_SATS: '700',
    RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS: '7',
    RELAY_WITHDRAWAL_ALLOWANCE_START_SATS: '7',
    RELAY_GAME_SERVER_SECRET: SECRET,
    RELAY_RATE_LIMIT_PER_MINUTE: '7',
    WEBHOOK_SECRET: 'whsec_1',
    WEBHOOK_ALLOW_UNSIGNED: '1',
    WEBHOOK_TOLERANCE_SECONDS: '7',
    RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE: '7',
    RELAY_BODY_TIMEOUT_SECONDS: '7',
    RELAY_STREAMS_PER_PLAYER: '7',
    RELAY_STREAMS_PER_ADDRESS: '7',
    RELAY_PUBLIC_URL: 'https://r.example.com',
    RELAY_TRUST_PROXY: '1',
    RELAY_ADMIN_TOKEN: SECRET,
    RELAY_ADMIN_FAILURES_PER_MINUTE: '7',
    RELAY_WALLET_LOW_SATS: '7',
  };

  it('hands createRelay every setting it reads: a new setting is either mapped or named as the shell’s', () => {
    expect([...SHELL, ...Object.keys(CHANGED)].sort()).toEqual(Object.keys(SETTINGS).sort());
    // With RELAY_SECRET set, loadConfig writes nothing in the data dir.
    const base = { RELAY_SECRET: SECRET, RELAY_DATA_DIR: join(tmpdir(), 'rewardbus-unit-never-written') };
    // A Map (the catalog) is written as its entries.
    const options = (env: Record<string, string>) => JSON.stringify(relayOptions(loadConfig({ ...base, ...env })), (_, v) => (v instanceof Map ? [...v.entries()] : v));
    const before = options({});
    // A setting read only beside another (a start error alone), changed with it.
    const BESIDE: Record<string, Record<string, string>> = {
      RELAY_PAYMENT_LEASE_MS: { RELAY_DATABASE_URL: CHANGED.RELAY_DATABASE_URL! },
      RELAY_WITHDRAWAL_ALLOWANCE_START_SATS: { RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS: CHANGED.RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS! },
    };
    for (const [name, value] of Object.entries(CHANGED)) {
      const beside = BESIDE[name];
      const after = options({ [name]: value, ...beside });
      const without = beside ? options(beside) : before;
      expect(after, `${name}=${value} reaches createRelay`).not.toBe(without);
    }
  });

  it('passes the same-named options as they are, and groups the webhooks and stream caps', () => {
    const config = loadConfig({ RELAY_SECRET: SECRET, RELAY_STREAMS_PER_PLAYER: '2', WEBHOOK_TOLERANCE_SECONDS: '30', RELAY_HOLD_ABOVE_SATS: '500' });
    expect(relayOptions(config)).toMatchObject({
      secret: SECRET,
      holdAboveSats: 500,
      userDailyCapSats: DEFAULTS.userDailyCapSats,
      mode: 'sandbox',
      webhooks: { toleranceSeconds: 30, allowUnsigned: false },
      streamCaps: { perPlayer: 2, perAddress: DEFAULTS.streamsPerAddress },
    });
    expect(relayOptions(config)).not.toHaveProperty('gameServerSecret');
  });
});
