// The review command on held claims, while the relay runs: list them, deny one, approve one (paid
// once through the service), each audited with the operator's name.

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { serve } from '@hono/node-server';
import { afterEach, expect, it } from 'vitest';
import { createSandbox } from '../../src/sandbox/index.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';
import { relayCommand } from '../helpers/relay-command.js';

const run = promisify(execFile);
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

it('review held lists held claims; deny refuses one, approve pays one once; both audited with --by', async () => {
  const key = `held_${randomUUID()}`;
  const sandbox = createSandbox({ apiKey: key });
  const service = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => service.once('listening', r));
  cleanup.push(() => service.close());
  const env = {
    PAYMENTS_API_KEY: key,
    PAYMENTS_BASE_URL: `http://127.0.0.1:${(service.address() as AddressInfo).port}`,
    RELAY_PUBLIC_URL: 'https://relay.example.com',
    RELAY_HOLD_ABOVE_SATS: '20',
    RELAY_ADMIN_TOKEN: `admin-${randomUUID()}`,
  };
  const relay: TestRelay = await startTestRelay(env);
  cleanup.push(() => relay.stop());
  const cli = (...args: string[]) => run(process.execPath, relayCommand('review', ...args), { env: { ...process.env, ...env, RELAY_DATA_DIR: relay.dataDir } });

  const alice = await relay.link('alice');
  const big = await relay.claim(alice.token, { achievementId: 'first-coin' });
  const bob = await relay.link('bob');
  const other = await relay.claim(bob.token, { achievementId: 'first-coin' });
  expect([big.body.status, other.body.status]).toEqual(['held', 'held']);

  const listed = (await cli('held')).stdout;
  expect(listed).toContain(big.body.id);
  expect(listed).toContain(other.body.id);
  expect((await cli('deny', other.body.id, '--by', 'ops-cli')).stdout).toContain('denied_by_operator');
  const [first, second] = await Promise.allSettled([cli('approve', big.body.id, '--by', 'ops-cli'), cli('approve', big.body.id, '--by', 'ops-other')]);
  expect([first.status, second.status].sort()).toEqual(['fulfilled', 'rejected']);
  expect(sandbox.payments()).toHaveLength(1);
  expect(sandbox.payments()[0]!.comment).toContain(big.body.id);
  await expect(cli('deny', big.body.id)).rejects.toThrow(/not held for approval/);
  expect((await cli('held')).stdout).toContain('Nothing is held.');
  const record = await fetch(`${relay.url}/v1/rewards/${big.body.id}`, { headers: { authorization: `Bearer ${alice.token}` } });
  expect(await record.json()).toMatchObject({ status: 'paid' });
  const audit = async (id: string) =>
    ((await (await fetch(`${relay.url}/admin/api/rewards/${id}`, { headers: { authorization: `Bearer ${env.RELAY_ADMIN_TOKEN}` } })).json()) as { audit: unknown[] }).audit;
  expect(await audit(other.body.id)).toMatchObject([{ actor: 'ops-cli', action: 'deny', fromState: 'held', toState: 'rejected' }]);
  expect(await audit(big.body.id)).toMatchObject([{ action: 'approve', fromState: 'held', toState: 'sending' }]);
}, 120_000);

it('review approve on a later day holds the claim to RELAY_DAILY_BUDGET_USD, as the relay would (the CLI builds the relay’s limits)', async () => {
  const key = `held_${randomUUID()}`;
  const sandbox = createSandbox({ apiKey: key });
  const service = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => service.once('listening', r));
  cleanup.push(() => service.close());
  const base = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  const price = await fetch(`${base}/_sandbox/btcusd`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ usd: 50_000 }) });
  expect(price.status).toBe(200);
  const env = { PAYMENTS_API_KEY: key, PAYMENTS_BASE_URL: base, RELAY_PUBLIC_URL: 'https://relay.example.com', RELAY_HOLD_ABOVE_SATS: '20' };
  const relay: TestRelay = await startTestRelay({ ...env, RELAY_DAILY_BUDGET_USD: '1' });
  cleanup.push(() => relay.stop());
  const alice = await relay.link('alice');
  const held = await relay.claim(alice.token, { achievementId: 'first-coin' });
  // 21 sats at $50,000 a bitcoin: $0.0105.
  expect(held.body).toMatchObject({ status: 'held', sats: 21, usd: 0.0105 });

  // Tomorrow (this process's clock a day on: the approval's time is the core's), the budget lowered to $0.01.
  const tomorrow = 'data:text/javascript,const now = Date.now; Date.now = () => now() + 86400000;';
  const cli = (budgetUsd: string, ...args: string[]) =>
    run(process.execPath, ['--import', tomorrow, ...relayCommand('review', ...args)], {
      env: { ...process.env, ...env, RELAY_DAILY_BUDGET_USD: budgetUsd, RELAY_DATA_DIR: relay.dataDir },
    });
  await expect(cli('0.01', 'approve', held.body.id)).rejects.toThrow(/stays held: today's budget has no room for it \(daily_budget\)/);
  expect(sandbox.payments()).toHaveLength(0);
  expect((await cli('0.01', 'held')).stdout).toContain(held.body.id);
  // With room in dollars, the same approval pays it.
  expect((await cli('0.02', 'approve', held.body.id)).stdout).toContain('paid');
  expect(sandbox.payments().map((p) => Number(p.amount) / 1000)).toEqual([21]);
}, 120_000);

// `npm start -- --payout balance` (the embedded sandbox, no key) with a hold: approving a held credit
// calls no service, yet the command refused it for the missing key, as it must a held payment.
it('review approve without PAYMENTS_API_KEY credits a held credit (balance mode), and still refuses a held payment', async () => {
  const env = { RELAY_PAYOUT_MODE: 'balance', RELAY_HOLD_ABOVE_SATS: '20' };
  const relay: TestRelay = await startTestRelay(env);
  cleanup.push(() => relay.stop());
  const cli = (...args: string[]) =>
    run(process.execPath, relayCommand('review', ...args), { env: { ...process.env, ...env, PAYMENTS_API_KEY: '', PAYMENTS_BASE_URL: '', RELAY_DATA_DIR: relay.dataDir } });
  const alice = await relay.link('alice');
  const held = await relay.claim(alice.token, { achievementId: 'first-coin' });
  expect(held.body).toMatchObject({ status: 'held', sats: 21 });
  expect((await cli('approve', held.body.id, '--by', 'ops-cli')).stdout).toContain('credited');
  const record = await fetch(`${relay.url}/v1/rewards/${held.body.id}`, { headers: { authorization: `Bearer ${alice.token}` } });
  expect(await record.json()).toMatchObject({ status: 'credited' });

  // An instant relay's held claim is a payment: the embedded sandbox is in the relay's process, not this one.
  const instant: TestRelay = await startTestRelay({ RELAY_HOLD_ABOVE_SATS: '20' });
  cleanup.push(() => instant.stop());
  const bob = await instant.link('bob');
  const payment = await instant.claim(bob.token, { achievementId: 'first-coin' });
  expect(payment.body.status).toBe('held');
  const refused = run(process.execPath, relayCommand('review', 'approve', payment.body.id), {
    env: { ...process.env, PAYMENTS_API_KEY: '', PAYMENTS_BASE_URL: '', RELAY_DATA_DIR: instant.dataDir },
  });
  await expect(refused).rejects.toThrow(/No PAYMENTS_API_KEY: the embedded sandbox lives in the relay process; approve on the operator's page/);
  expect((await cli('held')).stdout).toContain('Nothing is held.');
}, 120_000);
