import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const TOKEN = `admin-${randomUUID()}`;
const relays: TestRelay[] = [];
afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});
const start = async (...args: Parameters<typeof startTestRelay>) => {
  const r = await startTestRelay(...args);
  relays.push(r);
  return r;
};

/** One sample's value from Prometheus text, by its name and labels as written. */
const sample = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}()[\].+*?^$|\\]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

describe('GET /metrics', () => {
  it('moves its counters with a payout, for the operator token only', async () => {
    const relay = await start({ RELAY_ADMIN_TOKEN: TOKEN });
    const scrape = (token = TOKEN) => fetch(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect((await scrape('wrong-token')).status).toBe(401);
    expect((await fetch(`${relay.url}/metrics`)).headers.get('content-type')).toBe('application/problem+json');
    const before = await (await scrape()).text();
    expect(sample(before, 'rewardbus_sats_paid_total')).toBe(0);

    const player = await relay.link('metered');
    expect((await relay.claim(player.token, { achievementId: 'first-coin' })).body.status).toBe('paid');
    expect((await relay.claim(player.token, { achievementId: 'first-coin' })).body.status).toBe('rejected');
    const r = await scrape();
    expect(r.headers.get('content-type')).toContain('text/plain');
    const after = await r.text();
    expect(sample(after, 'rewardbus_payouts_total{state="paid",achievement="first-coin"}')).toBe(1);
    expect(sample(after, 'rewardbus_payouts_total{state="rejected",achievement="first-coin"}')).toBe(1);
    expect(sample(after, 'rewardbus_sats_paid_total')).toBe(21);
    expect(sample(after, 'rewardbus_budget_used_sats')).toBe(21);
    expect(sample(after, 'rewardbus_needs_review_open')).toBe(0);
    expect(sample(after, 'rewardbus_payout_seconds_count')).toBe(1);
    expect(sample(after, 'rewardbus_service_call_seconds_count{call="send_payment"}')).toBe(1);
    expect(sample(after, 'rewardbus_http_requests_total{route="/v1/rewards",status="201"}')).toBe(2);
    expect(after).not.toContain(relay.sandbox!.apiKey);
  });

  it('is not there at all without RELAY_ADMIN_TOKEN, nor is the operator page', async () => {
    const service = await start();
    const relay = await start({ PAYMENTS_API_KEY: service.sandbox!.apiKey, PAYMENTS_BASE_URL: `${service.url}/sandbox`, RELAY_PUBLIC_URL: 'https://relay.example.com' });
    for (const path of ['/metrics', '/admin', '/admin/api/summary']) {
      const r = await fetch(relay.url + path, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect([path, r.status]).toEqual([path, 404]);
    }
  });
});
