import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { DEMO_CATALOG, DEMO_GAME_SERVER_SECRET } from '../../demo/game-server.js';
import { payoutFromArgs, startDemo } from '../../demo/serve.js';
import { createLogger, loadConfig } from '../../src/relay/index.js';
import { freePort } from '../helpers/processes.js';

const config = (env: Record<string, string> = {}) =>
  loadConfig({ PORT: '0', RELAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'rewardbus-demo-page-')), WEBHOOK_SECRET: 'whsec_demo-page-test', ...env });

const policy = async (env?: Record<string, string>) => {
  const server = await startDemo(config(env), { logger: createLogger('silent') });
  try {
    return (await fetch(`${server.url}/`)).headers.get('content-security-policy') ?? '';
  } finally {
    await server.close();
  }
};

// A live demo (an API key, or a standalone sandbox over http) frames the service's ramp widget:
// without a frame-src naming its origin the browser refused to load it.
it("lets the demo frame the service's ramp widget when it pays through the service, and nothing else when offline", async () => {
  const live = await policy({ PAYMENTS_API_KEY: 'test-key', PAYMENTS_BASE_URL: 'http://127.0.0.1:4777', RELAY_PUBLIC_URL: 'http://127.0.0.1:8787' });
  expect(live).toMatch(/frame-src 'self' https: http:\/\/127\.0\.0\.1:4777;/);
  const offline = await policy();
  expect(offline).toMatch(/frame-src 'self';/);
  expect(offline).toContain("frame-ancestors 'none'");
});

/**
 * `npm start -- …args` (node --import tsx demo/serve.ts) run to its end: its exit code and what it
 * said. Its ledger in a temporary directory: a start that fails only when it listens has opened
 * the ledger by then, which the default would put in the project's folder.
 */
const npmStart = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rewardbus-npm-start-'));
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'demo/serve.ts', ...args],
      { env: { ...process.env, PORT: '0', RELAY_DATA_DIR: dataDir, ...env }, timeout: 60_000 },
      (err, _out, stderr) => resolve({ code: err ? (child.exitCode ?? null) : 0, stderr }),
    );
  });

it('npm start -- --payout with a mode it does not know says which it takes and exits 1, without a stack trace', { timeout: 60_000 }, async () => {
  const r = await npmStart(['--payout', 'bogus']);
  expect(r.code).toBe(1);
  expect(r.stderr.trim()).toBe('--payout takes balance or instant, not bogus');
});

it('npm start on a HOST that is no address of this machine names HOST, as the relay does', { timeout: 60_000 }, async () => {
  const r = await npmStart([], { HOST: '192.0.2.1' });
  expect(r.code).toBe(1);
  expect(r.stderr.split('\n')[0]).toMatch(/^HOST 192\.0\.2\.1 is not an address of this machine/);
});

// The script npm start prints for today's high scores, run with no relay where it posts: it said only "fetch failed".
it('demo/tournament.ts with no relay at RELAY_URL names RELAY_URL and where it looked', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'demo/tournament.ts', 'ada:1200'],
      { env: { ...process.env, RELAY_URL: `http://127.0.0.1:${port}` }, timeout: 60_000 },
      (err, _out, stderr) => resolve({ code: err ? (child.exitCode ?? null) : 0, stderr }),
    );
  });
  expect(r.code).toBe(1);
  expect(r.stderr.split('\n')[0]).toMatch(new RegExp(`^No relay answers at RELAY_URL http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)`));
});

// The command npm start prints for today's high scores, run as printed on a fresh demo: nobody named
// has linked yet, and the relay's "422 unknown_player" alone did not say how to make them players.
it("demo/tournament.ts naming gamertags that never linked says to play as them first, at the demo's address", { timeout: 60_000 }, async () => {
  const server = await startDemo(config({ RELAY_CATALOG: DEMO_CATALOG, RELAY_GAME_SERVER_SECRET: DEMO_GAME_SERVER_SECRET }), { logger: createLogger('silent') });
  try {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', 'demo/tournament.ts', 'ada:1200', 'bob:800'],
        { env: { ...process.env, RELAY_URL: server.url }, timeout: 60_000 },
        (err, _out, stderr) => resolve({ code: err ? (child.exitCode ?? null) : 0, stderr }),
      );
    });
    expect(r.code).toBe(1);
    const [said, hint] = r.stderr.trim().split('\n');
    expect(said).toBe('422 unknown_player: Never linked with this relay: ada, bob');
    expect(hint).toBe(`Each gamertag must have linked with this relay first: open ${server.url}/, link as ada, then as bob, and run this again.`);
  } finally {
    await server.close();
  }
});

// `npm start -- --payout` with its value left off started the demo in instant mode, saying nothing.
it('npm start -- --payout with no mode after it is refused, as an unknown mode is', () => {
  expect(() => payoutFromArgs(['--payout'], {})).toThrow('--payout takes balance or instant, not nothing');
  const env: NodeJS.ProcessEnv = {};
  payoutFromArgs(['--payout', 'balance'], env);
  expect(env).toEqual({ RELAY_PAYOUT_MODE: 'balance', RELAY_MIN_WITHDRAWAL_SATS: '20' });
});
