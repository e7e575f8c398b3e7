// Every way an intent's state changes reaches the player: an open event stream hears it, and a
// resume (Last-Event-ID) finds it. One test per settlement path.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxOptions } from '../../src/sandbox/index.js';
import { TEST_GAMERTAGS } from '../../src/sandbox/index.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';
import { relayCommand } from '../helpers/relay-command.js';
import { openSse, readSse } from '../helpers/sse.js';

const run = promisify(execFile);
const cli = (dataDir: string, ...args: string[]) => run(process.execPath, relayCommand(...args), { env: { ...process.env, RELAY_DATA_DIR: dataDir } });

let relay: TestRelay | undefined;
const streams: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(streams.splice(0).map((s) => s.close()));
  await relay?.stop();
  relay = undefined;
});

async function setUp(gamertag: string, env: Record<string, string> = {}, sandbox: SandboxOptions = {}) {
  relay = await startTestRelay(env, { sandbox });
  const player = await relay.link(gamertag);
  const stream = await openSse(relay.url, player.token);
  streams.push(stream);
  const admin = (path: string, init: RequestInit = {}) =>
    fetch(`${relay!.url}/admin/api${path}`, {
      ...init,
      headers: { authorization: `Bearer ${relay!.adminToken}`, 'x-operator': 'ops-ann', ...(init.body ? { 'content-type': 'application/json' } : {}) },
    });
  return { relay, player, stream, admin };
}

const statusOf = (id: string, status: string) => (m: { event: string; data: Record<string, unknown> }) => m.event === 'reward' && m.data.id === id && m.data.status === status;

describe('every settlement reaches the player', () => {
  it('a payout: paid, heard on the open stream', async () => {
    const { relay, player, stream } = await setUp('alice');
    const r = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(r.body.status).toBe('paid');
    await stream.until(statusOf(r.body.id, 'paid'));
  });

  it('a refusal at claim: rejected with its reason, heard on the open stream', async () => {
    const { relay, player, stream } = await setUp('alice');
    await relay.claim(player.token, { achievementId: 'first-coin' });
    const again = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(again.body).toMatchObject({ status: 'rejected', reason: 'already_claimed' });
    expect((await stream.until(statusOf(again.body.id, 'rejected'))).data.reason).toBe('already_claimed');
  });

  it('a late answer: needs_review, then paid, both heard', async () => {
    const { relay, player, stream } = await setUp(TEST_GAMERTAGS.ambiguous, { PAYMENTS_TIMEOUT_MS: '200' }, { limboMs: 500 });
    const r = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(r.body.status).toBe('needs_review');
    await stream.until(statusOf(r.body.id, 'needs_review'));
    const paid = await stream.until(statusOf(r.body.id, 'paid'));
    expect(paid.data.paymentId).toBe(relay.sandbox!.payments()[0]!.transactionId);
  });

  it("the operator's reconcile on the page: a tortoise payout reaches the open stream as paid within a second, audited", async () => {
    const { relay, player, stream, admin } = await setUp(TEST_GAMERTAGS.processing, {}, { processingMs: 200 });
    const r = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(r.body).toMatchObject({ status: 'needs_review', reason: 'payment_processing' });
    // The operator presses "check with the service" until the service knows (processingMs).
    let answer: Record<string, unknown> = {};
    let t0 = 0;
    await expect
      .poll(async () => {
        t0 = Date.now();
        answer = (await (await admin(`/review/${r.body.id}/reconcile`, { method: 'POST' })).json()) as Record<string, unknown>;
        return answer.settled;
      })
      .toBe(true);
    expect(answer).toMatchObject({ entry: { state: 'paid' }, audit: [{ actor: 'ops-ann', action: 'reconcile', fromState: 'needs_review', toState: 'paid' }] });
    await stream.until(statusOf(r.body.id, 'paid'), 1000);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it("the operator's mark-paid and mark-failed on the page, with their documented bodies: heard, and in the audit trail", async () => {
    const { relay, player, stream, admin } = await setUp(TEST_GAMERTAGS.ambiguous, { PAYMENTS_TIMEOUT_MS: '200' }, { limboMs: 60_000 });
    const a = await relay.claim(player.token, { achievementId: 'first-coin' });
    const b = await relay.claim(player.token, { achievementId: 'daily-login' });
    expect([a.body.status, b.body.status]).toEqual(['needs_review', 'needs_review']);
    const paid = await admin(`/review/${a.body.id}/mark-paid`, { method: 'POST', body: JSON.stringify({ transactionId: 'tx-checked-by-hand' }) });
    expect(paid.status).toBe(200);
    expect(await paid.json()).toMatchObject({ settled: true, entry: { state: 'paid', paymentId: 'tx-checked-by-hand' } });
    const failed = await admin(`/review/${b.body.id}/mark-failed`, { method: 'POST' });
    expect(failed.status).toBe(200);
    await stream.until(statusOf(a.body.id, 'paid'));
    expect((await stream.until(statusOf(b.body.id, 'failed'))).data.reason).toBe('operator_marked_failed');
    const trail = (await (await admin(`/rewards/${b.body.id}`)).json()) as { audit: unknown[] };
    expect(trail.audit).toMatchObject([{ actor: 'ops-ann', action: 'mark-failed', fromState: 'needs_review', toState: 'failed' }]);
  });

  it("the review command while the relay runs: a limbo payout marked paid is on the player's resume and in the audit trail with the operator's name", async () => {
    const { relay, player, admin } = await setUp(TEST_GAMERTAGS.ambiguous, { PAYMENTS_TIMEOUT_MS: '200' }, { limboMs: 60_000 });
    const r = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(r.body.status).toBe('needs_review');
    const tx = relay.sandbox!.payments()[0]!.transactionId;
    const { stdout } = await cli(relay.dataDir, 'review', 'mark-paid', r.body.id, tx, '--by', 'ops-bob');
    expect(stdout).toContain(r.body.id);
    const resumed = await readSse(relay.url, player.token, 2, '0');
    expect(resumed.map((e) => [e.data.id, e.data.status])).toEqual([
      [r.body.id, 'needs_review'],
      [r.body.id, 'paid'],
    ]);
    const trail = (await (await admin(`/rewards/${r.body.id}`)).json()) as { entry: unknown; audit: unknown[] };
    expect(trail).toMatchObject({ entry: { state: 'paid', paymentId: tx }, audit: [{ actor: 'ops-bob', action: 'mark-paid', fromState: 'needs_review', toState: 'paid' }] });
  });

  it("the relay's own reconciliation (at start, and each sweep): a review the service has settled is heard as paid", async () => {
    const { relay, player, stream } = await setUp(TEST_GAMERTAGS.processing, {}, { processingMs: 100 });
    const r = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(r.body.status).toBe('needs_review');
    await expect.poll(async () => (await relay.relay.reconcile()).settled).toBe(1);
    await stream.until(statusOf(r.body.id, 'paid'));
  });

  it('a replay of a settled key answers the entry as it stands now, and tells nothing twice', async () => {
    const { relay, player, stream } = await setUp('alice');
    const key = randomUUID();
    const r = await relay.claim(player.token, { achievementId: 'first-coin' }, key);
    const again = await relay.claim(player.token, { achievementId: 'first-coin' }, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(r.body);
    await stream.until(statusOf(r.body.id, 'paid'));
    // A later payout's event: once it is heard, anything the replay had told would have come before it.
    const later = await relay.claim(player.token, { achievementId: 'daily-login' });
    await stream.until(statusOf(later.body.id, 'paid'));
    expect(stream.events.filter((e) => e.data.id === r.body.id)).toHaveLength(1);
  });
});
