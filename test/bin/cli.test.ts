import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig, openConfiguredStore } from '../../src/relay/index.js';
import { freshDatabase } from '../helpers/postgres.js';
import { freePort } from '../helpers/processes.js';
import { relayCommand } from '../helpers/relay-command.js';

// `npm run relay`'s own command, from source; the other cases run the build (relay-command.ts).
const SOURCE_CLI = ['--import', 'tsx', 'src/bin/rewardbus.ts'];
const postgresUrl = inject('postgresUrl');
const relayPackage = JSON.parse(readFileSync('packages/relay/package.json', 'utf8')) as { version: string };

/** Runs the relay's command; resolves with its exit code and output, whatever the code. */
async function run(args: string[], env: Record<string, string> = {}) {
  try {
    const r = await promisify(execFile)(process.execPath, relayCommand(...args), { env: { ...process.env, ...env }, timeout: 20_000 });
    return { code: 0, ...r };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('the relay command', () => {
  it('--help and -h list every command and every setting of .env.example, and exit 0', async () => {
    const settings = [...readFileSync('.env.example', 'utf8').matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1]!);
    for (const flag of ['--help', '-h']) {
      const r = await run([flag]);
      expect(r.code).toBe(0);
      for (const word of ['start', 'sandbox', 'review list', 'reconcile', 'mark-paid', 'mark-failed', 'backup', '--port', ...settings]) expect(r.stdout).toContain(word);
    }
  });

  it('--version prints the package version and exits 0', async () => {
    const r = await run(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(relayPackage.version);
  });

  it('says so and exits 2 on an unknown command or option', async () => {
    const command = await run(['strat']);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain('Unknown command: strat');
    const option = await run(['start', '--prot', '1']);
    expect(option.code).toBe(2);
    expect(option.stderr.trim()).toBe('Unknown option --prot. See rewardbus-relay --help.');
  });

  // docs/operating.md and relay-api.md say reconcile needs the key; with the embedded sandbox it says who reconciles.
  it('review reconcile without PAYMENTS_API_KEY says the relay reconciles the embedded sandbox at start, and exits 1', async () => {
    const r = await run(['review', 'reconcile'], { PAYMENTS_API_KEY: '', PAYMENTS_BASE_URL: '', RELAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'rewardbus-cli-')) });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('No PAYMENTS_API_KEY: the embedded sandbox lives in the relay process, which reconciles at start.');
  });

  // `npm run relay -- 9999`, by analogy with `npm run sandbox -- 8790`, was told to run `rewardbus-relay 9999 …`.
  it('start with a port as an argument says to pass it as --port, and exits 2', async () => {
    const r = await run(['start', '9999']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('start takes no arguments (given: 9999): for the port, --port 9999 (npm run relay -- --port 9999).');
    const other = await run(['start', 'nonsense']);
    expect(other.code).toBe(2);
    expect(other.stderr.trim()).toBe('start takes no arguments (given: nonsense). See rewardbus-relay --help.');
  });

  // `review approve a b` approved a alone and said nothing of b: an operator took both as decided.
  it('refuses arguments a command would ignore, before it changes anything, and exits 2', async () => {
    const env = { RELAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'rewardbus-cli-')) };
    const approve = await run(['review', 'approve', 'id-1', 'id-2'], env);
    expect(approve.code).toBe(2);
    expect(approve.stderr.split('\n')[0]).toBe('review approve takes one id (given: id-1 id-2): one decision per command.');
    const list = await run(['review', 'list', 'everything'], env);
    expect(list.code).toBe(2);
    expect(list.stderr.split('\n')[0]).toBe('review list takes no arguments (given: everything).');
    const markPaid = await run(['review', 'mark-paid', 'id-1', 'tx-1', 'id-2'], env);
    expect(markPaid.stderr.split('\n')[0]).toBe('review mark-paid takes one id and its transactionId (given: id-1 tx-1 id-2): one decision per command.');
    const backup = await run(['backup', 'a.sqlite', 'b.sqlite'], env);
    expect(backup.code).toBe(2);
    expect(backup.stderr.split('\n')[0]).toBe('backup takes one FILE (given: a.sqlite b.sqlite).');
    const sandbox = await run(['sandbox', '8790', '8791'], env);
    expect(sandbox.code).toBe(2);
    expect(sandbox.stderr.split('\n')[0]).toBe('sandbox takes one port (given: 8790 8791).');
    const post = await run(['tournament', 'post', 'a.json', 'b.json'], env);
    expect(post.code).toBe(2);
    expect(post.stderr.split('\n')[0]).toBe('tournament post takes one FILE (given: a.json b.json).');
  });

  // docs/operating.md runs `review` on PostgreSQL with RELAY_DATABASE_URL set: it was refused for want of
  // RELAY_SECRET, which only a relay serving players reads (to sign their tokens), as backup already knew.
  it('review and tournament post on PostgreSQL need no RELAY_SECRET: they go to the database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rewardbus-cli-'));
    const catalog = join(dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify([{ id: 'weekly-cup', kind: 'tournament', title: 'Weekly cup', prizes: [100], payout: 'balance' }]));
    const file = join(dir, 'results.json');
    writeFileSync(file, JSON.stringify({ tournamentId: 'weekly-cup', period: '2026-W48', ranking: ['ada'] }));
    // RELAY_SECRET empty, as a .env copied from .env.example leaves it.
    const env = { RELAY_DATABASE_URL: 'postgres://rewardbus@127.0.0.1:1/rewardbus', RELAY_SECRET: '', RELAY_DATA_DIR: dir, RELAY_CATALOG: catalog };
    for (const args of [
      ['review', 'list'],
      ['tournament', 'post', file],
    ]) {
      const r = await run(args, env);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toMatch(/^RELAY_DATABASE_URL: cannot open the PostgreSQL database rewardbus@127\.0\.0\.1:1\/rewardbus/);
    }
  });

  // With a stand-in secret the commands would have taken part in the relays' agreement on RELAY_SECRET:
  // refused by a database whose relays had started, or recording the stand-in on a fresh one.
  it.skipIf(!postgresUrl)('review on PostgreSQL without RELAY_SECRET reads the ledger and leaves the relays’ secret as it was', async () => {
    const RELAY_DATABASE_URL = await freshDatabase(postgresUrl, { migrated: true });
    const env = { RELAY_DATABASE_URL, RELAY_SECRET: '', RELAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'rewardbus-cli-')) };
    const before = await run(['review', 'list'], env);
    expect(before.stderr).toBe('');
    expect(before.stdout.trim()).toBe('Nothing to review.');
    const secret = `${crypto.randomUUID()}${crypto.randomUUID()}`;
    const relayStore = () => openConfiguredStore(loadConfig({ ...env, RELAY_SECRET: secret }));
    await (await relayStore()).close();
    const after = await run(['review', 'held'], env);
    expect(after.stderr).toBe('');
    expect(after.stdout.trim()).toBe('Nothing is held.');
    // A relay with another secret is still refused: the command recorded none of its own.
    await expect(openConfiguredStore(loadConfig({ ...env, RELAY_SECRET: `${secret}-other` }))).rejects.toMatchObject({ setting: 'RELAY_SECRET' });
    await (await relayStore()).close();
  });

  // Run from the wrong directory (or without the unit's RELAY_DATA_DIR), `review list` made a new empty
  // ledger dir there and answered "Nothing to review.": an operator took it for the relay's.
  it('review in a RELAY_DATA_DIR with no ledger names the setting, exits 1 and creates nothing', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'rewardbus-cli-')), 'not-the-relays');
    for (const args of [
      ['review', 'list'],
      ['review', 'held'],
      ['review', 'deny', 'some-id'],
    ]) {
      const r = await run(args, { RELAY_DATA_DIR: dir });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stdout, args.join(' ')).toBe('');
      expect(r.stderr.split('\n')[0], args.join(' ')).toBe(`No ledger at ${join(dir, 'ledger.sqlite')}: is RELAY_DATA_DIR (${dir}) the relay's?`);
    }
    expect(existsSync(dir)).toBe(false);
  });

  it('names the setting when the catalog file is missing', async () => {
    const r = await run(['start', '--port', '0'], { RELAY_CATALOG: '/nowhere/catalog.json', RELAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'rewardbus-cli-')) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('RELAY_CATALOG: /nowhere/catalog.json no such file');
  });

  it('start --port (as npm run relay runs it, from source) listens there, and logs each payout as a JSON line as it happens', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [...SOURCE_CLI, 'start', '--port', String(port)], {
      env: { ...process.env, RELAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'rewardbus-cli-')), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await expect.poll(() => out, { timeout: 10_000 }).toContain('"event":"listening"');
      const base = `http://127.0.0.1:${port}`;
      const link = await fetch(`${base}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag: 'alice' }) });
      const { token } = (await link.json()) as { token: string };
      const claim = await fetch(`${base}/v1/rewards`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': crypto.randomUUID() },
        body: JSON.stringify({ achievementId: 'first-coin' }),
      });
      expect(claim.status).toBe(201);
      // The line is there while the relay still runs: not held in a buffer until exit.
      await expect.poll(() => out, { timeout: 5000 }).toContain('"event":"settlement"');
      for (const line of out.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      child.kill('SIGTERM');
    }
  });
});
