import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const API_KEY = `live_${randomUUID()}`;
let relay: TestRelay;
let sandboxServer: TestRelay;
let token: string;
const bodies: string[] = [];

beforeAll(async () => {
  // A relay with a configured key, paying a sandbox that expects that key: the live setup.
  sandboxServer = await startTestRelay({}, { sandbox: { apiKey: API_KEY } });
  relay = await startTestRelay({ PAYMENTS_API_KEY: API_KEY, PAYMENTS_BASE_URL: `${sandboxServer.url}/sandbox`, RELAY_PUBLIC_URL: 'https://relay.example.com' });
  token = (await relay.link('alice')).token;
});
afterAll(async () => {
  await relay.stop();
  await sandboxServer.stop();
});

async function post(path: string, init: { body?: string; headers?: Record<string, string> }) {
  const r = await fetch(relay.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const text = await r.text();
  bodies.push(text, JSON.stringify([...r.headers]));
  return { status: r.status, type: r.headers.get('content-type'), headers: r.headers, body: JSON.parse(text) as { code?: string; status?: string } };
}

describe('bad input', () => {
  it.each([
    ['malformed JSON', '{"achievementId":', {}, 400, 'bad_request'],
    ['a wrong type', '{"achievementId":42}', {}, 400, 'bad_request'],
    ['an array', '[1,2]', {}, 400, 'bad_request'],
    ['an amount', '{"achievementId":"first-coin","amount":1000000}', {}, 400, 'bad_request'],
    ['a bad occurredAt', '{"achievementId":"first-coin","occurredAt":"yesterday"}', {}, 400, 'bad_request'],
    ['an unknown achievement', '{"achievementId":"free-money"}', {}, 404, 'unknown_achievement'],
    ['no idempotency key', '{"achievementId":"first-coin"}', { 'idempotency-key': 'not-a-uuid' }, 400, 'idempotency_key_required'],
    ['a huge body', JSON.stringify({ achievementId: 'first-coin', pad: 'x'.repeat(100_000) }), {}, 413, 'payload_too_large'],
    ['a wrong content type', '{"achievementId":"first-coin"}', { 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
    ['a forged token', '{"achievementId":"first-coin"}', { authorization: 'Bearer rb1.eyJ1c2VySWQiOiJ4In0.AAAA' }, 401, 'unauthorized'],
    ['no token', '{"achievementId":"first-coin"}', { authorization: '' }, 401, 'unauthorized'],
  ] as const)('answers %s with a 4xx problem and pays nothing', async (_, body, headers, status, code) => {
    const before = sandboxServer.sandbox!.payments().length;
    const r = await post('/v1/rewards', { body, headers });
    expect(r.status).toBe(status);
    expect(r.type).toBe('application/problem+json');
    expect(r.body.code).toBe(code);
    expect(sandboxServer.sandbox!.payments()).toHaveLength(before);
  });

  it('refuses a token signed with another secret', async () => {
    const other = await startTestRelay({ PAYMENTS_API_KEY: API_KEY, PAYMENTS_BASE_URL: `${sandboxServer.url}/sandbox`, RELAY_PUBLIC_URL: 'https://relay.example.com' });
    const foreign = (await other.link('mallory')).token;
    await other.stop();
    const r = await post('/v1/rewards', { body: '{"achievementId":"first-coin"}', headers: { authorization: `Bearer ${foreign}` } });
    expect(r.status).toBe(401);
  });

  it('rate-limits with 429 and Retry-After, and never answers 5xx to any of it', async () => {
    const limitedRelay = await startTestRelay({ RELAY_RATE_LIMIT_PER_MINUTE: '5' });
    const player = await limitedRelay.link('spammer');
    const answers = [];
    for (let i = 0; i < 8; i++) {
      const r = await fetch(`${limitedRelay.url}/v1/rewards`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${player.token}`, 'idempotency-key': randomUUID() },
        body: '{"achievementId":"coin-streak"}',
      });
      answers.push({ status: r.status, headers: r.headers, body: (await r.json()) as { code?: string } });
    }
    await limitedRelay.stop();
    expect(answers.slice(0, 4).every((a) => a.status === 201)).toBe(true);
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.body.code).toBe('rate_limited');
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(answers.every((a) => a.status < 500)).toBe(true);
  });

  it('leaks the API key in no response and no log line', async () => {
    const r = await post('/v1/rewards', { body: '{"achievementId":"first-coin"}' });
    expect(r.body.status).toBe('paid');
    for (const path of ['/v1/health', '/v1/catalog', '/v1/rewards', '/nope']) {
      const res = await fetch(relay.url + path, { headers: { authorization: `Bearer ${token}` } });
      bodies.push(await res.text(), JSON.stringify([...res.headers]));
    }
    expect(bodies.length).toBeGreaterThan(20);
    expect(relay.logs.length).toBeGreaterThan(5);
    // The payout's own line (one settlement line per change of state, since the settlement core).
    expect(relay.logs.join('\n')).toContain('"event":"settlement","cause":"payout"');
    for (const text of [...bodies, ...relay.logs]) expect(text).not.toContain(API_KEY);
  });
});
