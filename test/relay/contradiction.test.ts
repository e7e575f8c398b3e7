// A late answer from the service that contradicts an operator's decision is not dropped: the
// intent goes back to review, marked, audited, logged as an error and counted.
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_GAMERTAGS } from '../../src/sandbox/index.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

describe('a late answer that contradicts a final decision', () => {
  it('puts the intent back in review, first on the page, and the once-only achievement cannot be paid again', async () => {
    relay = await startTestRelay({ PAYMENTS_TIMEOUT_MS: '200' }, { sandbox: { limboMs: 1200 } });
    const admin = (path: string, init: RequestInit = {}) =>
      fetch(`${relay!.url}/admin/api${path}`, { ...init, headers: { authorization: `Bearer ${relay!.adminToken}`, 'x-operator': 'ann' } });
    const player = await relay.link(TEST_GAMERTAGS.ambiguous);
    const first = await relay.claim(player.token, { achievementId: 'first-coin' });
    expect(first.body.status).toBe('needs_review');
    // The operator guesses wrong: nothing was paid, says the operator.
    expect((await admin(`/review/${first.body.id}/mark-failed`, { method: 'POST' })).status).toBe(200);
    // The service's late answer: it was paid.
    await expect.poll(async () => ((await (await admin(`/rewards/${first.body.id}`)).json()) as { entry: { state: string } }).entry.state, { timeout: 5000 }).toBe('needs_review');
    const trail = (await (await admin(`/rewards/${first.body.id}`)).json()) as {
      entry: { reason: string; paymentId: string };
      audit: Array<{ actor: string; fromState: string; toState: string }>;
    };
    expect(trail.entry).toMatchObject({ reason: 'contradicted', paymentId: relay.sandbox!.payments()[0]!.transactionId });
    expect(trail.audit.map((a) => [a.actor, a.fromState, a.toState])).toEqual([
      ['ann', 'needs_review', 'failed'],
      ['payments-service', 'failed', 'needs_review'],
    ]);
    const review = (await (await admin('/review')).json()) as { entries: Array<{ id: string; reason: string }> };
    expect(review.entries[0]).toMatchObject({ id: first.body.id, reason: 'contradicted' });
    // Its sats are reserved again: the once-only achievement is not paid a second time.
    expect((await relay.claim(player.token, { achievementId: 'first-coin' })).body).toMatchObject({ status: 'rejected', reason: 'already_claimed' });
    expect(relay.sandbox!.payments()).toHaveLength(1);
    expect(relay.logs.join('')).toMatch(/"level":50[^\n]*"reason":"contradicted"/);
    expect(await (await fetch(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${relay.adminToken}` } })).text()).toMatch(/^rewardbus_contradictions_total 1$/m);
  });
});
