import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/relay/index.js';
import { SettingError, SettingsError } from '../../src/relay/settings-errors.js';
import { relayCommand } from '../helpers/relay-command.js';

// Every setting of .env.example, given a value the relay cannot run with: `start` must say which
// setting, what is accepted, before anything else, and exit non-zero. Every case through the
// loader; the ones only the running relay finds, and one of each kind, run as an operator would.

const CLI = relayCommand('start');
const SETTINGS = [...readFileSync('.env.example', 'utf8').matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1]!);
const dir = mkdtempSync(join(tmpdir(), 'rewardbus-settings-'));
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const SECRET = 'a-relay-secret-of-at-least-32-characters';

interface Case {
  /** The setting the first line of stderr must name. */
  setting: string;
  env: Record<string, string>;
  /** Also on that line. */
  says?: string;
  /** A secret: never echoed back. */
  hidden?: string;
  /** Some other output may come first on stdout (the store opens after the relay listens). */
  late?: boolean;
}

const CASES: Case[] = [
  { setting: 'PORT', env: { PORT: 'abc' }, says: 'a whole number from 0 to 65535' },
  { setting: 'HOST', env: { HOST: '999.1.1.1' }, says: 'an IP address' },
  { setting: 'PAYMENTS_API_KEY', env: { PAYMENTS_API_KEY: 'pasted key with spaces', PAYMENTS_BASE_URL: 'https://api.example.com' }, hidden: 'pasted key' },
  { setting: 'PAYMENTS_API_KEY', env: { PAYMENTS_BASE_URL: 'https://api.example.com' } },
  { setting: 'PAYMENTS_BASE_URL', env: { PAYMENTS_API_KEY: 'key', PAYMENTS_BASE_URL: 'api.example.com' }, says: 'https://' },
  { setting: 'PAYMENTS_TIMEOUT_MS', env: { PAYMENTS_TIMEOUT_MS: '10s' } },
  { setting: 'RELAY_DATA_DIR', env: { RELAY_DATA_DIR: '/dev/null/rewardbus' } },
  { setting: 'RELAY_DATABASE_URL', env: { RELAY_DATABASE_URL: 'mysql://root:hunter22@db/rewards', RELAY_SECRET: SECRET }, says: 'postgres://', hidden: 'hunter22' },
  {
    setting: 'RELAY_DATABASE_URL',
    env: { RELAY_DATABASE_URL: 'postgres://rewardbus:hunter22@127.0.0.1:1/rewards', RELAY_SECRET: SECRET },
    says: 'ECONNREFUSED',
    hidden: 'hunter22',
    late: true,
  },
  {
    setting: 'RELAY_DATABASE_LISTEN_URL',
    env: { RELAY_DATABASE_URL: 'postgres://rewardbus@127.0.0.1:1/rewards', RELAY_DATABASE_LISTEN_URL: 'db.internal:5432', RELAY_SECRET: SECRET },
    says: 'postgres://',
  },
  {
    setting: 'RELAY_DATABASE_LISTEN_URL',
    env: { RELAY_DATABASE_LISTEN_URL: 'postgres://rewardbus:hunter22@db.internal/rewards' },
    says: 'without RELAY_DATABASE_URL',
    hidden: 'hunter22',
  },
  {
    setting: 'RELAY_DATABASE_LISTEN_URL',
    env: {
      RELAY_DATABASE_URL: 'postgres://rewardbus:hunter22@127.0.0.1:1/rewards',
      RELAY_DATABASE_LISTEN_URL: 'postgres://rewardbus:hunter33@127.0.0.1:2/rewards',
      RELAY_SECRET: SECRET,
    },
    says: 'ECONNREFUSED',
    hidden: 'hunter33',
    late: true,
  },
  { setting: 'RELAY_PAYMENT_LEASE_MS', env: { RELAY_PAYMENT_LEASE_MS: '5' } },
  { setting: 'RELAY_PAYMENT_LEASE_MS', env: { RELAY_PAYMENT_LEASE_MS: '15000' }, says: 'longer than two PAYMENTS_TIMEOUT_MS' },
  { setting: 'RELAY_PRICE_MAX_AGE_SECONDS', env: { RELAY_PRICE_TTL_SECONDS: '120', RELAY_PRICE_MAX_AGE_SECONDS: '60' }, says: 'below RELAY_PRICE_TTL_SECONDS (120)' },
  { setting: 'RELAY_PRICE_MAX_AGE_SECONDS', env: { RELAY_PRICE_MAX_AGE_SECONDS: '30' }, says: 'between reads' },
  { setting: 'RELAY_CATALOG', env: { RELAY_CATALOG: join(dir, 'missing.json') }, says: 'no such file' },
  {
    setting: 'RELAY_CATALOG',
    env: { RELAY_CATALOG: file('bad.json', '[{ "id": "first-coin", "title": "First", "sats": 0, "repeat": { "kind": "once" } }]') },
    says: 'not a catalog',
  },
  { setting: 'RELAY_SECRET', env: { RELAY_SECRET: 'too-short' }, says: 'at least 32 characters', hidden: 'too-short' },
  { setting: 'RELAY_SECRET', env: { RELAY_SECRET: `${SECRET},short` }, hidden: SECRET },
  { setting: 'RELAY_ALLOWED_ORIGINS', env: { RELAY_ALLOWED_ORIGINS: 'not-an-origin' }, says: 'https://game.example.com' },
  { setting: 'RELAY_ALLOWED_ORIGINS', env: { RELAY_ALLOWED_ORIGINS: 'https://game.example.com/' }, says: 'no trailing slash' },
  { setting: 'RELAY_USER_DAILY_CAP_SATS', env: { RELAY_USER_DAILY_CAP_SATS: '-1' } },
  { setting: 'RELAY_DAILY_BUDGET_SATS', env: { RELAY_DAILY_BUDGET_SATS: 'lots' } },
  { setting: 'RELAY_USER_DAILY_CAP_USD', env: { RELAY_USER_DAILY_CAP_USD: '$1' } },
  { setting: 'RELAY_DAILY_BUDGET_USD', env: { RELAY_DAILY_BUDGET_USD: '0.0000001' } },
  { setting: 'RELAY_DAILY_BUDGET_USD', env: { RELAY_DAILY_BUDGET_USD: '25', RELAY_DAILY_BUDGET_SATS: '1000' }, says: 'both set' },
  { setting: 'RELAY_USER_DAILY_CAP_USD', env: { RELAY_USER_DAILY_CAP_USD: '1', RELAY_USER_DAILY_CAP_SATS: '1000' }, says: 'both set' },
  { setting: 'RELAY_ADDRESS_DAILY_CAP_SATS', env: { RELAY_ADDRESS_DAILY_CAP_SATS: '20 sats' } },
  { setting: 'RELAY_LINKS_PER_ADDRESS_PER_DAY', env: { RELAY_LINKS_PER_ADDRESS_PER_DAY: '-2' } },
  { setting: 'RELAY_PRICE_TTL_SECONDS', env: { RELAY_PRICE_TTL_SECONDS: '0' }, says: 'from 1' },
  { setting: 'RELAY_PRICE_MAX_AGE_SECONDS', env: { RELAY_PRICE_MAX_AGE_SECONDS: '10m' } },
  { setting: 'RELAY_HOLD_ABOVE_SATS', env: { RELAY_HOLD_ABOVE_SATS: '1e3' } },
  { setting: 'RELAY_DENIAL_COOLDOWN_HOURS', env: { RELAY_DENIAL_COOLDOWN_HOURS: '1.5' } },
  { setting: 'RELAY_PAYOUT_MODE', env: { RELAY_PAYOUT_MODE: 'later' } },
  { setting: 'RELAY_MIN_WITHDRAWAL_SATS', env: { RELAY_MIN_WITHDRAWAL_SATS: '0' } },
  { setting: 'RELAY_WITHDRAWAL_DAILY_LIMIT_SATS', env: { RELAY_WITHDRAWAL_DAILY_LIMIT_SATS: '-1' } },
  // Under the smallest withdrawal (100 by default), no withdrawal could ever be made.
  { setting: 'RELAY_WITHDRAWAL_DAILY_LIMIT_SATS', env: { RELAY_WITHDRAWAL_DAILY_LIMIT_SATS: '50' }, says: 'below RELAY_MIN_WITHDRAWAL_SATS (100)' },
  { setting: 'RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS', env: { RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS: '2.5' } },
  { setting: 'RELAY_WITHDRAWAL_ALLOWANCE_START_SATS', env: { RELAY_WITHDRAWAL_ALLOWANCE_START_SATS: 'lots' } },
  // Alone it would be ignored: no allowance is kept without one per minute of play, so nothing would limit withdrawals.
  { setting: 'RELAY_WITHDRAWAL_ALLOWANCE_START_SATS', env: { RELAY_WITHDRAWAL_ALLOWANCE_START_SATS: '500' }, says: 'RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS is 0' },
  { setting: 'RELAY_GAME_SERVER_SECRET', env: { RELAY_GAME_SERVER_SECRET: 'short-game-secret' }, says: 'at least 32 characters', hidden: 'short-game-secret' },
  {
    setting: 'RELAY_GAME_SERVER_SECRET',
    env: { RELAY_CATALOG: file('proof.json', '[{ "id": "boss", "title": "Boss", "sats": 50, "repeat": { "kind": "once" }, "proof": "server" }]') },
    says: 'required by RELAY_CATALOG',
  },
  { setting: 'RELAY_RATE_LIMIT_PER_MINUTE', env: { RELAY_RATE_LIMIT_PER_MINUTE: '1.5' } },
  { setting: 'RELAY_ADMIN_FAILURES_PER_MINUTE', env: { RELAY_ADMIN_FAILURES_PER_MINUTE: '0' }, says: 'from 1' },
  { setting: 'WEBHOOK_SECRET', env: { WEBHOOK_SECRET: '"whsec quoted"' }, hidden: 'whsec' },
  { setting: 'WEBHOOK_ALLOW_UNSIGNED', env: { WEBHOOK_ALLOW_UNSIGNED: 'yes please' } },
  { setting: 'WEBHOOK_TOLERANCE_SECONDS', env: { WEBHOOK_TOLERANCE_SECONDS: '5m' } },
  { setting: 'RELAY_BODY_TIMEOUT_SECONDS', env: { RELAY_BODY_TIMEOUT_SECONDS: '0' }, says: 'from 1' },
  { setting: 'RELAY_STREAMS_PER_PLAYER', env: { RELAY_STREAMS_PER_PLAYER: 'five' } },
  { setting: 'RELAY_STREAMS_PER_ADDRESS', env: { RELAY_STREAMS_PER_ADDRESS: '-3' } },
  { setting: 'RELAY_WALLET_LOW_SATS', env: { RELAY_WALLET_LOW_SATS: '10k' } },
  { setting: 'RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE', env: { RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE: 'many' } },
  { setting: 'RELAY_PUBLIC_URL', env: { RELAY_PUBLIC_URL: 'rewards.example.com' } },
  { setting: 'RELAY_PUBLIC_URL', env: { PAYMENTS_API_KEY: 'key', PAYMENTS_BASE_URL: 'https://api.example.com' }, says: 'required with PAYMENTS_API_KEY' },
  { setting: 'RELAY_TRUST_PROXY', env: { RELAY_TRUST_PROXY: 'proxy.internal' } },
  { setting: 'RELAY_ADMIN_TOKEN', env: { RELAY_ADMIN_TOKEN: 'hunter2' }, hidden: 'hunter2' },
  { setting: 'LOG_LEVEL', env: { LOG_LEVEL: 'loud' }, says: 'trace, debug, info, warn, error' },
];

/** The relay started with only these settings; resolves when it exits (or is killed at 20 s). */
function start(env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !SETTINGS.includes(k) && k !== 'RELAY_ADMIN_FAILURES_PER_MINUTE'));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...CLI, ...args],
      { env: { ...inherited, PORT: '0', RELAY_DATA_DIR: mkdtempSync(join(dir, 'data-')), ...env }, timeout: 20_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

/** Runs fn over items, a few at a time: each is a Node process on a machine with two cores. */
async function pooled<T, R>(items: readonly T[], fn: (item: T) => Promise<R>, width = 4): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

describe('a setting the relay cannot run with', () => {
  it('every setting of .env.example has a bad value here', () => {
    expect(SETTINGS).toContain('RELAY_ADMIN_FAILURES_PER_MINUTE');
    for (const setting of SETTINGS)
      expect(
        CASES.map((c) => c.setting),
        setting,
      ).toContain(setting);
  });

  it('is named first by the loader, with what is accepted, and no secret in it', () => {
    for (const c of CASES.filter((x) => !x.late)) {
      let thrown: unknown;
      try {
        loadConfig({ PORT: '0', RELAY_DATA_DIR: mkdtempSync(join(dir, 'data-')), ...c.env });
      } catch (err) {
        thrown = err;
      }
      const what = `${JSON.stringify(c.env)} → ${String(thrown)}`;
      expect(thrown instanceof SettingError || thrown instanceof SettingsError, what).toBe(true);
      const first = (thrown as Error).message.split('\n')[0]!;
      expect(first, what).toMatch(new RegExp(`^${c.setting}\\b`));
      if (c.says) expect(first, what).toContain(c.says);
      if (c.hidden) expect((thrown as Error).message, what).not.toContain(c.hidden);
    }
  });

  // As an operator meets it: the ones that only the running relay finds (late), and one of each
  // kind the loader finds (a number, a secret kept out, a file, a list), each a process of its own.
  const SPAWNED = CASES.filter((c) => c.late || ['PORT', 'RELAY_ADMIN_TOKEN', 'RELAY_CATALOG', 'RELAY_TRUST_PROXY', 'LOG_LEVEL', 'RELAY_PAYOUT_MODE'].includes(c.setting));

  it('is named on the first line of stderr, with what is accepted, before any other output; the relay exits non-zero', { timeout: 120_000 }, async () => {
    expect(SPAWNED.length).toBeGreaterThan(6);
    const results = await pooled(SPAWNED, (c) => start(c.env));
    results.forEach((r, i) => {
      const c = SPAWNED[i]!;
      const first = r.stderr.split('\n')[0]!;
      const what = `${JSON.stringify(c.env)} → ${r.code}: ${r.stderr}`;
      expect(r.code, what).not.toBe(0);
      expect(r.code, what).not.toBeNull();
      expect(first, what).toMatch(new RegExp(`^${c.setting}\\b`));
      if (c.says) expect(first, what).toContain(c.says);
      if (c.hidden) expect(r.stderr + r.stdout, what).not.toContain(c.hidden);
      if (!c.late) expect(r.stdout, what).toBe('');
    });
  });

  it('a command line option is named too: --port abc, --host, --bogus, a missing value (exit 2)', { timeout: 60_000 }, async () => {
    const [port, host, bogus, missing] = await pooled([['--port', 'abc'], ['--host', '999.1.1.1'], ['--bogus'], ['--port']], (args) => start({}, args));
    expect(port!.stderr.split('\n')[0]).toBe('--port "abc" is not accepted: it must be a whole number from 0 to 65535. See rewardbus-relay --help.');
    expect(host!.stderr.split('\n')[0]).toMatch(/^--host "999\.1\.1\.1" is not accepted: it must be an IP address/);
    expect(bogus!.stderr.trim()).toBe('Unknown option --bogus. See rewardbus-relay --help.');
    expect(missing!.stderr.trim()).toBe('The option -p, --port needs a value. See rewardbus-relay --help.');
    for (const r of [port, host, bogus, missing]) expect(r!.code).toBe(2);
  });

  it('a ledger file that is no database is said as such, with the backup to restore, and left as it was', { timeout: 30_000 }, async () => {
    const data = mkdtempSync(join(dir, 'data-'));
    const garbage = 'not a ledger '.repeat(400);
    writeFileSync(join(data, 'ledger.sqlite'), garbage);
    const r = await start({ RELAY_DATA_DIR: data });
    const first = r.stderr.split('\n')[0]!;
    expect(r.code).toBe(1);
    // Once it said "(SQLITE_NOTADB): it must be a directory this user can write", a wrong cause.
    expect(first).toMatch(/^RELAY_DATA_DIR .*: cannot open the ledger .*ledger\.sqlite \(file is not a database\): the file is not a SQLite database, or it is damaged\./);
    expect(first).toContain('restore it from a backup (docs/deploy.md#6-backups)');
    expect(first).not.toContain('this user can write');
    expect(readFileSync(join(data, 'ledger.sqlite'), 'utf8')).toBe(garbage);
  });

  it('a host that is no address of this machine or does not resolve, or a port in use, names HOST or PORT', { timeout: 60_000 }, async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as AddressInfo).port);
    try {
      const [notHere, inUse, unknown] = await Promise.all([start({ HOST: '192.0.2.1' }), start({ PORT: port }), start({ HOST: 'no-such-host.invalid' })]);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr.split('\n')[0]).toMatch(/^HOST no-such-host\.invalid does not resolve to an address/);
      expect(notHere.code).toBe(1);
      expect(notHere.stderr.split('\n')[0]).toMatch(/^HOST 192\.0\.2\.1 is not an address of this machine/);
      expect(inUse.code).toBe(1);
      expect(inUse.stderr.split('\n')[0]).toBe(`PORT ${port} is in use on 127.0.0.1: stop what runs there, or choose another with PORT or --port N.`);
    } finally {
      taken.close();
    }
  });
});
