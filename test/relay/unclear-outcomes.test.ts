import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serve } from '@hono/node-server';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox, TEST_GAMERTAGS } from '../../src/sandbox/index.js';

import { startTestRelay, type TestRelay } from '../helpers/relay.js';
import { relayCommand, startRelayCommand } from '../helpers/relay-command.js';
import { readSse } from '../helpers/sse.js';

const run = promisify(execFile);
const review = (dataDir: string, ...args: string[]) => run(process.execPath, relayCommand('review', ...args), { env: { ...process.env, RELAY_DATA_DIR: dataDir } });

let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

describe('an unclear payment outcome', () => {
  it('ends needs_review, is never sent again, and is settled by its answer when that comes late', async () => {
    relay = await startTestRelay({ PAYMENTS_TIMEOUT_MS: '200' }, { sandbox: { limboMs: 600 } });
    const player = await relay.link(TEST_GAMERTAGS.ambiguous);
    const key = randomUUID();
    const first = await relay.claim(player.token, { achievementId: 'first-coin' }, key);
    expect(first.body).toMatchObject({ status: 'needs_review', reason: 'timeout' });
    expect((await relay.claim(player.token, { achievementId: 'first-coin' }, key)).body).toEqual(first.body);
    // The answer comes 600 ms after the payment: the entry is paid once it is heard.
    const record = async () => (await fetch(`${relay!.url}/v1/rewards/${first.body.id}`, { headers: { authorization: `Bearer ${player.token}` } })).json();
    await expect.poll(record, { timeout: 3000 }).toMatchObject({ status: 'paid' });
    const payments = relay.sandbox!.payments();
    expect(payments).toHaveLength(1);
    expect(await record()).toMatchObject({ status: 'paid', paymentId: payments[0]!.transactionId });
    expect(relay.logs.join('')).toContain('"cause":"late_answer",');
  });

  it('ends needs_review when no answer comes, is never sent again, and the operator command resolves it with one payment', async () => {
    // The answer comes long after this test (however slowly its review commands start on a busy
    // machine): only the operator can settle it.
    relay = await startTestRelay({ PAYMENTS_TIMEOUT_MS: '200' }, { sandbox: { limboMs: 600_000 } });
    const player = await relay.link(TEST_GAMERTAGS.ambiguous);
    const key = randomUUID();
    const first = await relay.claim(player.token, { achievementId: 'first-coin' }, key);
    expect(first.body).toMatchObject({ status: 'needs_review', reason: 'timeout' });

    // The client retries the same intent: the relay answers from its ledger and does not send again.
    const retry = await relay.claim(player.token, { achievementId: 'first-coin' }, key);
    expect(retry.body).toEqual(first.body);
    // A new intent for the same once-only achievement is refused while the first may have paid.
    expect((await relay.claim(player.token, { achievementId: 'first-coin' })).body.reason).toBe('already_claimed');
    const payments = relay.sandbox!.payments();
    expect(payments).toHaveLength(1);

    const listed = await review(relay.dataDir, 'list');
    expect(listed.stdout).toContain(first.body.id);
    await review(relay.dataDir, 'mark-paid', first.body.id, payments[0]!.transactionId);
    expect((await review(relay.dataDir, 'list')).stdout).toContain('Nothing to review');

    const after = await fetch(`${relay.url}/v1/rewards/${first.body.id}`, { headers: { authorization: `Bearer ${player.token}` } });
    expect(await after.json()).toMatchObject({ status: 'paid', paymentId: payments[0]!.transactionId });
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it('is settled through the payment-status endpoint when the transaction id is known', async () => {
    relay = await startTestRelay({}, { sandbox: { processingMs: 300 } });
    const player = await relay.link(TEST_GAMERTAGS.processing);
    const r = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(r.body).toMatchObject({ status: 'needs_review', reason: 'payment_processing' });
    expect(await relay.relay.reconcile()).toEqual({ settled: 0, open: 1 });
    // The service completes it 300 ms on: a later reconciliation settles it.
    await expect.poll(() => relay!.relay.reconcile(), { timeout: 3000 }).toEqual({ settled: 1, open: 0 });
    const after = await fetch(`${relay.url}/v1/rewards/${r.body.id}`, { headers: { authorization: `Bearer ${player.token}` } });
    expect(await after.json()).toMatchObject({ status: 'paid', paymentId: r.body.paymentId });
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it('operator mark-failed frees the reservation so the achievement can be earned again', async () => {
    // No answer comes during the test: a late one would contradict the operator's decision.
    relay = await startTestRelay({ PAYMENTS_TIMEOUT_MS: '100' }, { sandbox: { limboMs: 600_000 } });
    const player = await relay.link(TEST_GAMERTAGS.ambiguous);
    const first = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(first.body.status).toBe('needs_review');
    await review(relay.dataDir, 'mark-failed', first.body.id);
    await expect(review(relay.dataDir, 'mark-failed', first.body.id)).rejects.toThrow(/not awaiting review/);
    const again = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(again.body.status).toBe('needs_review');
  });
});

describe('a payments service out of reach', () => {
  it('answers 503 with Retry-After, pays nothing, and the same key pays once when it is back', async () => {
    const sandbox = createSandbox({ apiKey: 'k' });
    let server = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as AddressInfo).port;
    relay = await startTestRelay({ PAYMENTS_API_KEY: 'k', PAYMENTS_BASE_URL: `http://127.0.0.1:${port}`, RELAY_PUBLIC_URL: 'https://relay.example.com' });
    const player = await relay.link('alice');
    await new Promise<void>((r) => {
      server.close(() => r());
      (server as import('node:http').Server).closeAllConnections();
    });

    const key = randomUUID();
    const down = await relay.claim(player.token, { achievementId: 'first-coin' }, key);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBeTruthy();
    expect(down.body.code).toBe('service_unavailable');

    server = serve({ fetch: sandbox.fetch, port, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    const up = await relay.claim(player.token, { achievementId: 'first-coin' }, key);
    expect(up.body.status).toBe('paid');
    expect(sandbox.payments()).toHaveLength(1);
    server.close();
  });
});

/** Starts a claim for the gamertag, and kills the relay with SIGKILL once the ledger shows the intent in this phase. */
async function crashWhile(phase: 'claimed' | 'sent', gamertag: string, key: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'rewardbus-crash-'));
  const { child, url } = await startRelayCommand({ RELAY_DATA_DIR: dataDir, RELAY_RATE_LIMIT_PER_MINUTE: '0' });
  const player = (await (await fetch(`${url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag }) })).json()) as {
    token: string;
    userId: string;
  };
  const claim = fetch(`${url}/v1/rewards`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${player.token}`, 'idempotency-key': key },
    body: JSON.stringify({ achievementId: 'first-coin' }),
  }).catch(() => undefined);
  const db = new Database(join(dataDir, 'ledger.sqlite'), { readonly: true });
  const seen = () => !!db.prepare("SELECT 1 FROM rewards WHERE state = 'sending' AND phase = ?").get(phase);
  try {
    await expect.poll(seen, { timeout: 2000, interval: 5 }).toBe(true);
  } finally {
    db.close();
    child.kill('SIGKILL');
    await claim;
  }
  return { dataDir, player };
}

describe('a relay that crashed mid-send', () => {
  it('puts an intent whose payment may have left in review at start, instead of sending it again', async () => {
    // The ambiguous gamertag's payment answers in 30 s: the relay dies while it is out.
    const { dataDir, player } = await crashWhile('sent', TEST_GAMERTAGS.ambiguous, randomUUID());
    relay = await startTestRelay({}, {}, dataDir);
    const listed = await review(dataDir, 'list');
    expect(listed.stdout).toContain('interrupted');
    expect(relay.sandbox!.payments()).toHaveLength(0);
    expect(relay.logs.join('')).toContain('"event":"review"');
    // The player hears where it stands (being checked), through the recovery's settlement.
    const resumed = await readSse(relay.url, player.token, 1, '0');
    expect(resumed.map((e) => [e.data.status, e.data.reason])).toEqual([['needs_review', 'interrupted']]);
  });

  it('sends again an intent caught before its payment left (during the gamertag lookup): the retry pays once', async () => {
    // The slow gamertag's lookup answers in 1.5 s: the relay dies while it waits.
    const key = randomUUID();
    const { dataDir, player } = await crashWhile('claimed', TEST_GAMERTAGS.slow, key);
    relay = await startTestRelay({}, {}, dataDir);
    expect((await review(dataDir, 'list')).stdout).not.toContain('interrupted');
    const retry = await relay.claim(player.token, { achievementId: 'first-coin' }, key);
    expect(retry.body.status).toBe('paid');
    expect(relay.sandbox!.payments()).toHaveLength(1);
    expect((await relay.claim(player.token, { achievementId: 'first-coin' }, key)).headers.get('idempotent-replayed')).toBe('true');
  });
});
