// The tournament command while the relay runs (issue 37): `rewardbus-relay tournament post FILE`
// records a period's results through the relay's own core, pays each prize once through the
// service, records who posted (--by); the same file again pays nothing; other results are refused.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serve } from '@hono/node-server';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { createSandbox } from '../../src/sandbox/index.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';
import { relayCommand } from '../helpers/relay-command.js';

const run = promisify(execFile);
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

// A sandbox as the service, a relay with one tournament `cup` of `prizes` in its catalog, and the
// CLI run against the relay's data directory with the relay's own settings.
async function cupRelay(prizes: Array<number | { usd: number }>, extra: Record<string, string> = {}) {
  const key = `cup_${randomUUID()}`;
  const sandbox = createSandbox({ apiKey: key });
  const service = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => service.once('listening', r));
  cleanup.push(() => service.close());
  const base = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  const price = (body: object) => fetch(`${base}/_sandbox/btcusd`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const probe: TestRelay = await startTestRelay();
  const catalog = join(probe.dataDir, '..', `catalog-${randomUUID()}.json`);
  await probe.stop();
  writeFileSync(catalog, JSON.stringify([{ id: 'cup', kind: 'tournament', title: 'Weekly cup', prizes }]));
  cleanup.push(() => rmSync(catalog, { force: true }));
  const env = {
    PAYMENTS_API_KEY: key,
    PAYMENTS_BASE_URL: base,
    RELAY_PUBLIC_URL: 'https://relay.example.com',
    RELAY_CATALOG: catalog,
    RELAY_GAME_SERVER_SECRET: 'game-server-secret-0123456789abcdefghij',
    ...extra,
  };
  const relay: TestRelay = await startTestRelay(env);
  cleanup.push(() => relay.stop());
  const cli = (...args: string[]) => run(process.execPath, relayCommand('tournament', ...args), { env: { ...process.env, ...env, RELAY_DATA_DIR: relay.dataDir } });
  const results = (period: string, ranking: string[]) => {
    const path = join(relay.dataDir, `results-${randomUUID()}.json`);
    writeFileSync(path, JSON.stringify({ tournamentId: 'cup', period, ranking }));
    return path;
  };
  const posted = () => {
    const db = new Database(join(relay.dataDir, 'ledger.sqlite'), { readonly: true });
    cleanup.push(() => db.close());
    return db.prepare('SELECT tournament_id, period, places, by FROM tournament_results').all();
  };
  return { sandbox, relay, cli, price, results, posted };
}

it('tournament post FILE pays each prize once, records --by, replays the same file and refuses other results', async () => {
  const { sandbox, relay, cli, results: resultsOf, posted: table } = await cupRelay([500, 200]);

  const ada = await relay.link('ada');
  const bob = await relay.link('bob');
  const carl = await relay.link('carl');
  const file = (ranking: string[]) => resultsOf('2026-W48', ranking);
  const results = file(['bob', ada.userId, carl.userId]);
  const posted = (await cli('post', results, '--by', 'ops-cli')).stdout;
  expect(posted).toContain('posted cup 2026-W48');
  expect(sandbox.payments().map((p) => Number(p.amount) / 1000)).toEqual([500, 200]);
  expect(posted.split('\n').filter((l) => l.includes('\tpaid\t'))).toHaveLength(2);
  expect((await cli('post', results)).stdout).toContain('already posted');
  expect(sandbox.payments()).toHaveLength(2);
  await expect(cli('post', file([carl.userId, bob.userId]))).rejects.toThrow(/results_already_posted/);
  await expect(cli('post', file(['nobody-here']))).rejects.toThrow(/unknown_player: Never linked with this relay: nobody-here/);
  await expect(cli('post')).rejects.toThrow(/Usage: rewardbus-relay tournament post FILE/);
  expect(table()).toEqual([{ tournament_id: 'cup', period: '2026-W48', places: 2, by: 'cli:ops-cli' }]);
  // The players heard: their histories hold the prize, paid.
  const history = async (token: string) => (await (await fetch(`${relay.url}/v1/rewards`, { headers: { authorization: `Bearer ${token}` } })).json()) as { rewards: unknown[] };
  expect((await history(bob.token)).rewards).toMatchObject([{ status: 'paid', sats: 500, place: 1, period: '2026-W48' }]);
  expect((await history(carl.token)).rewards).toEqual([]);
}, 120_000);

it('tournament post FILE prices dollar prizes at the service’s price, and with no price says so and records nothing (issue 38)', async () => {
  const { sandbox, relay, cli, price, results, posted } = await cupRelay([{ usd: 1 }, 200]);
  const [ada, bob] = [await relay.link('ada'), await relay.link('bob')];
  const file = (period: string) => results(period, [bob.userId, ada.userId]);

  expect((await price({ usd: 50_000 })).status).toBe(200);
  expect((await cli('post', file('2026-W48'))).stdout).toContain('posted cup 2026-W48');
  // $1 at $50,000 a bitcoin: 2,000 sats.
  expect(sandbox.payments().map((p) => Number(p.amount) / 1000)).toEqual([2_000, 200]);

  expect((await price({ fail: 503 })).status).toBe(200);
  await expect(cli('post', file('2026-W49'))).rejects.toThrow(/price_unavailable[\s\S]*Nothing was recorded/);
  expect(posted()).toMatchObject([{ period: '2026-W48' }]);
  expect(sandbox.payments()).toHaveLength(2);
}, 120_000);

it('tournament post FILE under RELAY_DAILY_BUDGET_USD counts the sats prizes in dollars, as the relay does: a pool past the budget records nothing', async () => {
  const { sandbox, relay, cli, price, results, posted } = await cupRelay([5_000, 1_000], { RELAY_DAILY_BUDGET_USD: '4' });
  expect((await price({ usd: 50_000 })).status).toBe(200);
  const [ada, bob] = [await relay.link('ada'), await relay.link('bob')];
  const file = (period: string) => results(period, [bob.userId, ada.userId]);
  // 6,000 sats at $50,000 a bitcoin: $3 of the day's $4.
  expect((await cli('post', file('2026-W48'))).stdout).toContain('posted cup 2026-W48');
  expect(sandbox.payments().map((p) => Number(p.amount) / 1000)).toEqual([5_000, 1_000]);
  // Another $3 does not fit: refused as the relay refuses it, nothing recorded or paid.
  await expect(cli('post', file('2026-W49'))).rejects.toThrow(/daily_budget: The prizes \(6000 sats, \$3\) do not fit what is left of today's budget \(\$4\)/);
  expect(posted()).toMatchObject([{ period: '2026-W48' }]);
  expect(sandbox.payments()).toHaveLength(2);
}, 120_000);
