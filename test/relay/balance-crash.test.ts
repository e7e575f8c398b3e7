// A relay killed between a withdrawal's debit and the service's answer (issue 36), on SQLite and
// PostgreSQL: at restart the withdrawal is in review (it may have been paid), never sent again;
// the balance stays debited until an operator settles it, and the service paid it once.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serve } from '@hono/node-server';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createSandbox, TEST_GAMERTAGS } from '../../src/sandbox/index.js';
import type { BalanceView, WithdrawalList } from '../../src/wire/relay-api.js';
import { relayBackends } from '../helpers/backends.js';
import { stop } from '../helpers/processes.js';
import { relayCommand, startRelayCommand } from '../helpers/relay-command.js';

const postgresUrl = inject('postgresUrl');
const KEY = `crash_${randomUUID()}`;
const closers: Array<() => unknown> = [];
afterAll(() => closers.forEach((c) => c()));

describe.each(relayBackends(postgresUrl))('a withdrawal interrupted by a crash on $name', (backend) => {
  it('is in review at restart, never sent again, and the service paid it once', async () => {
    // One service for both lives of the relay: what it paid outlives the crash. Its answer to the
    // limbo gamertag's payment comes long after the relay is dead.
    const sandbox = createSandbox({ apiKey: KEY, limboMs: 600_000 });
    const server = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    closers.push(() => server.close());
    const dataDir = mkdtempSync(join(tmpdir(), 'rewardbus-balance-crash-'));
    const catalog = join(dataDir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify([{ id: 'coin', title: 'A coin', sats: 50, repeat: { kind: 'cooldown', seconds: 0 } }]));
    const backendEnv = await backend.env();
    const env = {
      PAYMENTS_API_KEY: KEY,
      PAYMENTS_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      PAYMENTS_TIMEOUT_MS: '300',
      RELAY_PUBLIC_URL: 'https://relay.example.com',
      RELAY_DATA_DIR: dataDir,
      RELAY_CATALOG: catalog,
      RELAY_PAYOUT_MODE: 'balance',
      RELAY_MIN_WITHDRAWAL_SATS: '50',
      RELAY_RATE_LIMIT_PER_MINUTE: '0',
      // A shared ledger leaves a dead relay's payment to the others once its lease runs out.
      RELAY_PAYMENT_LEASE_MS: '1000',
      ...backendEnv,
    };
    const first = await startRelayCommand(env);
    closers.push(() => first.child.kill('SIGKILL'));
    const post = (url: string, path: string, token: string | undefined, body: unknown, key?: string) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...(key ? { 'idempotency-key': key } : {}) },
        body: JSON.stringify(body),
      });
    const player = (await (await post(first.url, '/v1/players', undefined, { gamertag: TEST_GAMERTAGS.ambiguous })).json()) as { token: string; userId: string };
    for (let i = 0; i < 2; i++) expect((await post(first.url, '/v1/rewards', player.token, { achievementId: 'coin' }, randomUUID())).status).toBe(201);
    const key = randomUUID();
    const asked = post(first.url, '/v1/withdrawals', player.token, { sats: 100 }, key).catch(() => undefined);

    // The withdrawal is debited and its payment out (the recovery point `sent`), then the relay dies.
    const sent = async () => {
      const sql = "SELECT count(*) AS n FROM rewards WHERE kind = 'withdrawal' AND state = 'sending' AND phase = 'sent'";
      if (!backendEnv.RELAY_DATABASE_URL) {
        const db = new Database(join(dataDir, 'ledger.sqlite'), { readonly: true });
        try {
          return Number((db.prepare(sql).get() as { n: number }).n);
        } finally {
          db.close();
        }
      }
      const db = new pg.Client({ connectionString: backendEnv.RELAY_DATABASE_URL });
      await db.connect();
      try {
        return Number((await db.query<{ n: string }>(sql)).rows[0]!.n);
      } finally {
        await db.end();
      }
    };
    await expect.poll(sent, { timeout: 5000, interval: 10 }).toBe(1);
    await expect.poll(() => sandbox.payments().length, { timeout: 5000 }).toBe(1);
    first.child.kill('SIGKILL');
    await asked;

    const second = await startRelayCommand(env);
    closers.push(() => second.child.kill('SIGKILL'));
    const get = async <T>(path: string) => (await (await fetch(`${second.url}${path}`, { headers: { authorization: `Bearer ${player.token}` } })).json()) as T;
    // Recovered as a payment that may have left: in review, still debited; the retry of its key is answered from the ledger.
    await expect.poll(async () => (await get<WithdrawalList>('/v1/withdrawals')).withdrawals[0], { timeout: 10_000 }).toMatchObject({ status: 'needs_review' });
    const retry = await post(second.url, '/v1/withdrawals', player.token, { sats: 100 }, key);
    expect(((await retry.json()) as { status: string }).status).toBe('needs_review');
    expect((await get<BalanceView>('/v1/balance')).sats).toBe(0);
    expect(sandbox.payments()).toHaveLength(1);

    // The operator checks the service, which paid it: marked paid with its transaction id.
    const id = (await get<WithdrawalList>('/v1/withdrawals')).withdrawals[0]!.id;
    await promisify(execFile)(process.execPath, relayCommand('review', 'mark-paid', id, sandbox.payments()[0]!.transactionId), {
      env: { ...process.env, ...env },
    });
    await expect.poll(async () => (await get<WithdrawalList>('/v1/withdrawals')).withdrawals[0], { timeout: 5000 }).toMatchObject({ status: 'paid' });
    expect((await get<BalanceView>('/v1/balance')).sats).toBe(0);
    expect(sandbox.payments()).toHaveLength(1);
    await stop(second.child);
  }, 60_000);
});
