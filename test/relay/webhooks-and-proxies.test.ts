import { createHmac, randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { everyCoin } from '../helpers/client.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';
import { readSse } from '../helpers/sse.js';

const SECRET = 'webhook-test-secret';
let relay: TestRelay | undefined;
const servers: Server[] = [];
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
  servers.splice(0).forEach((s) => s.close());
});

const sign = (raw: string) => `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
function deliver(body: unknown, headers: Record<string, string> = {}) {
  const raw = JSON.stringify(body);
  return fetch(`${relay!.url}/v1/webhooks/payments`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-zbd-signature': sign(raw), ...headers }, body: raw }).then(
    async (r) => ({ status: r.status, body: (await r.json()) as { duplicate?: boolean; code?: string } }),
  );
}
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(relay!.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('webhooks are acted on once, and only while fresh', () => {
  it('dedupes on what the signature covers: a captured delivery resent with a new event-id header is a duplicate', async () => {
    relay = await startTestRelay({ WEBHOOK_SECRET: SECRET });
    const event = { id: 'evt-42', type: 'ramp.kyc.completed', data: { user_id: 'u1' }, created_at: new Date().toISOString() };
    expect((await deliver(event, { 'x-zbd-event-id': 'a' })).body.duplicate).toBe(false);
    expect((await deliver(event, { 'x-zbd-event-id': 'b' })).body.duplicate).toBe(true);
    expect((await deliver(event)).body.duplicate).toBe(true);
  });

  it('treats an empty id as no id: two different events are both acted on, each once', async () => {
    relay = await startTestRelay({ WEBHOOK_SECRET: SECRET });
    const a = { id: '', type: 'ramp.kyc.completed', data: { user_id: 'u1' } };
    const b = { id: '', type: 'ramp.kyc.completed', data: { user_id: 'u2' } };
    expect([(await deliver(a)).body.duplicate, (await deliver(b)).body.duplicate, (await deliver(a)).body.duplicate]).toEqual([false, false, true]);
  });

  it('refuses a delivery dated outside the tolerance (2020, or an hour ahead), within a configurable window', async () => {
    relay = await startTestRelay({ WEBHOOK_SECRET: SECRET });
    const old = await deliver({ id: 'old', type: 'ramp.kyc.completed', data: {}, created_at: '2020-01-01T00:00:00Z' });
    expect([old.status, old.body.code]).toEqual([400, 'stale_event']);
    const ahead = await deliver({ id: 'ahead', type: 'ramp.kyc.completed', data: {}, timestamp: Math.floor(Date.now() / 1000) + 3600 });
    expect(ahead.status).toBe(400);
    expect((await deliver({ id: 'now', type: 'ramp.kyc.completed', data: {}, created_at: Date.now() - 60_000 })).status).toBe(200);
    await relay.stop();
    relay = await startTestRelay({ WEBHOOK_SECRET: SECRET, WEBHOOK_TOLERANCE_SECONDS: '30' });
    expect((await deliver({ id: 'minute', type: 'ramp.kyc.completed', data: {}, created_at: Date.now() - 60_000 })).status).toBe(400);
  });

  it('rate-limits deliveries by source address', async () => {
    relay = await startTestRelay({ WEBHOOK_SECRET: SECRET, RELAY_WEBHOOK_RATE_LIMIT_PER_MINUTE: '3' });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await deliver({ id: `e${i}`, type: 'ramp.kyc.completed', data: {} })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });

  it('sends the service webhooks to the configured address, whatever Host the request names', async () => {
    relay = await startTestRelay();
    const player = await relay.link('buyer');
    const r = await post('/v1/ramp-sessions', { email: 'b@example.com' }, { authorization: `Bearer ${player.token}`, 'x-forwarded-host': 'evil.example.com' });
    expect(r.status).toBe(201);
    // node:http sends the Host header it is given (fetch would not).
    const spoofed = await new Promise<number>((resolve, reject) => {
      const { port } = new URL(relay!.url);
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/ramp-sessions',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${player.token}`, host: 'evil.example.com' },
        },
        (res) => resolve(res.resume().statusCode ?? 0),
      );
      req.on('error', reject);
      req.end(JSON.stringify({ email: 'b@example.com' }));
    });
    expect(spoofed).toBe(201);
    expect(relay.sandbox!.rampSessions.size).toBe(2);
    for (const s of relay.sandbox!.rampSessions.values()) expect(s.webhookUrl).toBe(`${relay.url}/v1/webhooks/payments`);
  });
});

describe('a payout goes to the player who earned it', () => {
  it('pays the current gamertag of the userId: a rename, the old name taken, a claim right after: 0 sats to anyone else', async () => {
    relay = await startTestRelay();
    const alice = await relay.link('alice');
    const bob = await relay.link('bob');
    const rename = (userId: string, gamertag: string) => post(`/sandbox/_sandbox/users/${userId}/gamertag`, { gamertag });
    expect((await relay.claim(alice.token, { achievementId: 'daily-login' })).body.status).toBe('paid');
    expect((await rename(alice.userId, 'alice-2')).status).toBe(200);
    expect((await rename(bob.userId, 'alice')).status).toBe(200);
    // At once (no wait): nothing may cache the old name, for any time at all.
    // Alice's token still says "alice": the relay pays her userId's gamertag now, alice-2.
    expect((await relay.claim(alice.token, { achievementId: 'first-coin' })).body.status).toBe('paid');
    const payments = relay.sandbox!.payments();
    expect(payments.map((p) => [p.gamertag, p.receiverId])).toEqual([
      ['alice', alice.userId],
      ['alice-2', alice.userId],
    ]);
    expect(payments.filter((p) => p.receiverId === bob.userId)).toEqual([]);
  });
});

describe("the service's errors never carry a secret out", () => {
  it('neither forwards nor logs an error message that quotes the API key', async () => {
    const key = `live_${randomUUID()}`;
    const service = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url?.startsWith('/v0/user-id/gamertag/')) return res.end(JSON.stringify({ success: true, message: 'ok', data: { id: randomUUID() } }));
      res.statusCode = 400;
      res.end(JSON.stringify({ success: false, error: { code: 'BAD_KEY', message: `The key ${key} (apikey=${key}) is not allowed here` } }));
    });
    servers.push(service);
    await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    relay = await startTestRelay({ PAYMENTS_API_KEY: key, PAYMENTS_BASE_URL: base, RELAY_PUBLIC_URL: 'https://relay.example.com' });
    const player = await relay.link('alice');
    const r = await post('/v1/ramp-sessions', { email: 'a@example.com' }, { authorization: `Bearer ${player.token}` });
    const text = await r.text();
    expect(r.status).toBe(400);
    expect(text).not.toContain(key);
    expect(relay.logs.join('\n')).toContain('ramp_refused');
    expect(relay.logs.join('\n')).not.toContain(key);
  });
});

describe('behind a reverse proxy', () => {
  const ask = (headers: Record<string, string>) =>
    fetch(`${relay!.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"gamertag":"nobody"}' }).then((r) => r.status);

  it('ignores X-Forwarded-For from anyone not trusted: spoofing it does not escape the limit', async () => {
    relay = await startTestRelay({ RELAY_RATE_LIMIT_PER_MINUTE: '2' });
    expect([await ask({ 'x-forwarded-for': '1.1.1.1' }), await ask({ 'x-forwarded-for': '2.2.2.2' }), await ask({ 'x-forwarded-for': '3.3.3.3' })]).toEqual([404, 404, 429]);
  });

  it.each([['1'], ['127.0.0.1']])('with RELAY_TRUST_PROXY=%s, limits each client behind the proxy on its own', async (trust) => {
    relay = await startTestRelay({ RELAY_RATE_LIMIT_PER_MINUTE: '2', RELAY_TRUST_PROXY: trust });
    const players = ['10.0.0.1', '10.0.0.2', '10.0.0.3'];
    for (const p of players) expect([await ask({ 'x-forwarded-for': p }), await ask({ 'x-forwarded-for': `9.9.9.9, ${p}` })]).toEqual([404, 404]);
    expect(await ask({ 'x-forwarded-for': '10.0.0.1' })).toBe(429);
  });
});

describe("the sandbox's test controls", () => {
  const outside = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  it.runIf(outside)('answer this machine only when the relay listens beyond loopback', async () => {
    relay = await startTestRelay({ HOST: '0.0.0.0' });
    const { port } = new URL(relay.url);
    expect((await fetch(`http://127.0.0.1:${port}/sandbox/_sandbox/payments`)).status).toBe(200);
    expect((await fetch(`http://${outside}:${port}/sandbox/_sandbox/payments`)).status).toBe(404);
    // Nor by another spelling of the path, which the sandbox's router decodes to the same control.
    for (const spelling of ['/sandbox/%5Fsandbox/payments', '/sandbox/_%73andbox/payments', '/%73andbox/_sandbox/payments', '/sandbox//_sandbox/payments']) {
      expect([spelling, (await fetch(`http://${outside}:${port}${spelling}`)).status]).toEqual([spelling, 404]);
    }
    expect((await fetch(`http://${outside}:${port}/v1/health`)).status).toBe(200);
    expect(relay.logs.join('')).toContain('"event":"sandbox_controls"');
  });
});

describe('a reconnecting stream', () => {
  it('gets everything it missed, past one page (600 events), and a malformed Last-Event-ID is a 400', async () => {
    relay = await startTestRelay({ RELAY_USER_DAILY_CAP_SATS: '0', RELAY_DAILY_BUDGET_SATS: '0' }, everyCoin);
    const player = await relay.link('streamer');
    for (let i = 0; i < 12; i++) await Promise.all(Array.from({ length: 50 }, () => relay!.claim(player.token, { achievementId: 'coin' })));
    const events = await readSse(relay.url, player.token, 600, '0', 10_000);
    expect(events).toHaveLength(600);
    expect(new Set(events.map((e) => e.id)).size).toBe(600);
    for (const bad of ['abc', '-1', '1e9', '12abc']) {
      const r = await fetch(`${relay.url}/v1/events?token=${encodeURIComponent(player.token)}`, { headers: { 'last-event-id': bad } });
      expect([bad, r.status]).toEqual([bad, 400]);
    }
  });
});
