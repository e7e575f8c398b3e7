import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const ORIGIN = 'https://game.example.com';
let relay: TestRelay;
let token: string;

beforeAll(async () => {
  relay = await startTestRelay({ RELAY_ALLOWED_ORIGINS: ORIGIN });
  token = (await relay.link('alice')).token;
});
afterAll(() => relay.stop());

const claim = (key: string, headers: Record<string, string> = {}) =>
  fetch(`${relay.url}/v1/rewards`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': key, ...headers },
    body: JSON.stringify({ achievementId: 'first-coin' }),
  });

describe("the relay's HTTP surface, as a client library relies on it", () => {
  it('gives an allowed origin CORS headers on errors too, so the game can read the problem', async () => {
    const answers = [
      await fetch(`${relay.url}/v1/rewards`, { headers: { origin: ORIGIN } }),
      await fetch(`${relay.url}/v1/nowhere`, { headers: { origin: ORIGIN } }),
      await fetch(`${relay.url}/v1/players`, { method: 'POST', headers: { origin: ORIGIN, 'content-type': 'application/json' }, body: '{' }),
      await fetch(`${relay.url}/v1/catalog`, { method: 'DELETE', headers: { origin: ORIGIN } }),
    ];
    expect(answers.map((r) => r.status)).toEqual([401, 404, 400, 405]);
    for (const r of answers) {
      expect(r.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(r.headers.get('content-type')).toBe('application/problem+json');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const stranger = await fetch(`${relay.url}/v1/rewards`, { headers: { origin: 'https://evil.example.com' } });
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers a replay with the original 201 and body, marked Idempotent-Replayed, for a bare or a quoted key', async () => {
    const key = randomUUID();
    const first = await claim(key);
    expect(first.status).toBe(201);
    const body = await first.json();
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    for (const sent of [key, `"${key}"`]) {
      const replay = await claim(sent);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.json()).toEqual(body);
    }
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it('answers 401 with WWW-Authenticate: Bearer', async () => {
    const r = await fetch(`${relay.url}/v1/rewards`, { headers: { authorization: 'Bearer rb1.forged.token' } });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
  });

  it('answers an unknown method on a known path with 405 and Allow, before asking who is calling', async () => {
    const cases: Array<[string, string, string]> = [
      ['PUT', '/v1/rewards', 'GET, HEAD, OPTIONS, POST'],
      ['DELETE', `/v1/rewards/${randomUUID()}`, 'GET, HEAD, OPTIONS'],
      ['GET', '/v1/players', 'OPTIONS, POST'],
      ['PATCH', '/v1/catalog', 'GET, HEAD, OPTIONS'],
    ];
    for (const [method, path, allow] of cases) {
      const r = await fetch(relay.url + path, { method });
      expect([method, path, r.status, r.headers.get('allow')]).toEqual([method, path, 405, allow]);
      expect(((await r.json()) as { code: string }).code).toBe('method_not_allowed');
    }
  });
});
