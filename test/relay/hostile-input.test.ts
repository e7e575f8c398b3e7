import { createHmac, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';
import { seededRandom } from '../helpers/seeded-random.js';

const SECRET = 'hostile-test-secret';
let relay: TestRelay;
let token: string;

beforeAll(async () => {
  relay = await startTestRelay({ WEBHOOK_SECRET: SECRET });
  token = (await relay.link('alice')).token;
});
afterAll(() => relay.stop());

const sign = (raw: string) => `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
const post = (path: string, raw: string, headers: Record<string, string> = {}) =>
  fetch(relay.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: raw });

/** Writes bytes straight to the relay's socket and returns what comes back. */
function rawExchange(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(relay.url);
    const socket = connect(Number(port), '127.0.0.1', () => socket.end(bytes));
    let answer = '';
    socket.on('data', (d) => (answer += d.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('hostile input gets a clear 4xx and changes nothing', () => {
  it('refuses a webhook body that is valid JSON but not an object, signed or not', async () => {
    for (const raw of ['null', '[]', '1', '"event"', 'true', '{"type":"x","data":null}', '{"type":"x","data":[1]}']) {
      const r = await post('/v1/webhooks/payments', raw, { 'x-zbd-signature': sign(raw) });
      expect([raw, r.status, r.headers.get('content-type')]).toEqual([raw, 400, 'application/problem+json']);
    }
  });

  it('refuses strings that are not valid Unicode (a lone surrogate) before they reach a URL or the service', async () => {
    const players = await post('/v1/players', '{"gamertag":"\\ud800"}');
    expect(players.status).toBe(400);
    const claim = await post('/v1/rewards', '{"achievementId":"first-\\udc00coin"}', { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID() });
    expect(claim.status).toBe(400);
    expect(relay.sandbox!.payments()).toHaveLength(0);
  });

  it("answers what Node's parser refuses (a bad request line, headers too large) as problem+json with the security headers", async () => {
    const bad = await rawExchange('GARBAGE\r\n\r\n');
    expect(bad).toMatch(/^HTTP\/1\.1 400 /);
    const huge = await rawExchange(`GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    // The code docs/relay-api.md#errors lists, as a client reads it from the body.
    expect(JSON.parse(huge.slice(huge.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 431, code: 'headers_too_large' });
    for (const answer of [bad, huge]) {
      expect(answer).toContain('Content-Type: application/problem+json');
      expect(answer).toContain('X-Content-Type-Options: nosniff');
    }
  });

  it('answers a request Node parses but no URL can be made of (`*`, a backslash in the path, a bad Host) as a problem+json 400 too', async () => {
    for (const head of ['GET * HTTP/1.1\r\nHost: relay', 'OPTIONS * HTTP/1.1\r\nHost: relay', 'GET /v1\\health HTTP/1.1\r\nHost: relay', 'GET /v1/health HTTP/1.1\r\nHost: a/b']) {
      const answer = await rawExchange(`${head}\r\n\r\n`);
      expect([head, answer.split('\r\n')[0]]).toEqual([head, 'HTTP/1.1 400 Bad Request']);
      expect(answer.toLowerCase()).toContain('content-type: application/problem+json');
      expect(answer.toLowerCase()).toContain('x-content-type-options: nosniff');
      expect(answer).toContain('"code":"bad_request"');
    }
  });

  it('stops reading a 96 MB chunked webhook at its limit, without buffering it', async () => {
    const before = process.memoryUsage().rss;
    const { port } = new URL(relay.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/webhooks/payments',
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE' ? undefined : reject(err)));
      const chunk = Buffer.alloc(1024 * 1024, 'a');
      let sent = 0;
      const pump = () => {
        while (sent < 96 && !req.destroyed) {
          sent++;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!req.destroyed) req.end();
      };
      pump();
    });
    expect(status).toBe(413);
    console.log(`96 MB chunked webhook: 413, resident memory grew ${((process.memoryUsage().rss - before) / 1048576).toFixed(1)} MB`);
    // The relay runs in this process: had it buffered the body, this would have grown by ~100 MB.
    expect(process.memoryUsage().rss - before).toBeLessThan(40 * 1024 * 1024);
  });

  it('puts nosniff, a frame policy and a CSP on every answer, errors included', async () => {
    const answers = [
      await fetch(`${relay.url}/v1/nowhere`),
      await fetch(`${relay.url}/v1/rewards`),
      await fetch(`${relay.url}/v1/catalog`, { method: 'PUT' }),
      await post('/v1/players', '{'),
      await post('/v1/players', 'x'.repeat(10_000)),
      await fetch(`${relay.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }),
      await fetch(`${relay.url}/v1/health`),
    ];
    expect(answers.map((r) => r.status)).toEqual([404, 401, 405, 400, 413, 415, 200]);
    for (const r of answers) {
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(r.headers.get('x-frame-options')).toBe('DENY');
      expect(r.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
  });

  it('keeps a player token out of caches, and refuses a token with an extra segment or padding', async () => {
    const linked = await post('/v1/players', '{"gamertag":"cachy"}');
    expect(linked.headers.get('cache-control')).toBe('no-store');
    const { token: good } = (await linked.json()) as { token: string };
    const ask = (t: string) => fetch(`${relay.url}/v1/rewards`, { headers: { authorization: `Bearer ${t}` } }).then((r) => r.status);
    expect(await ask(good)).toBe(200);
    for (const forged of [`${good}.extra`, `${good}=`, `${good}==`, good.replace('rb1.', 'rb1..'), ` ${good}x`]) expect([forged, await ask(forged)]).toEqual([forged, 401]);
  });
});

describe('a fuzz run of 5,000 random requests (seed 20261122)', () => {
  it('gets no 5xx and makes no payment', async () => {
    const rnd = seededRandom(20261122);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const paths = [
      '/v1/rewards',
      '/v1/players',
      '/v1/webhooks/payments',
      '/v1/ramp-sessions',
      '/v1/events',
      '/v1/catalog',
      '/v1/health',
      `/v1/rewards/${randomUUID()}`,
      '/v1/withdrawal-requests/%ZZ',
      '/v1/withdrawal-requests/x',
      '/v1/../v1/rewards',
      '/v1/rewards?limit=-1',
      '/v1/events?token=rb1.a.b',
    ];
    const strings = ['', 'a', '\ud800', '\u0000', '💰', 'x'.repeat(5000), 'first-coin ', 'null', '<script>', "'; DROP TABLE", '../../etc/passwd', '%00'];
    const values = (): unknown =>
      pick([
        () => pick(strings),
        () => rnd() * 1e12 - 5e11,
        () => null,
        () => true,
        () => [pick(strings)],
        () => ({ [pick(strings)]: pick(strings) }),
        () => -0,
        () => 1e308 * 10,
      ])();
    const bodies = (): string =>
      pick([
        () => JSON.stringify({ achievementId: pick(['level-x', ...strings]), amount: values() }),
        () => JSON.stringify({ gamertag: values() }),
        () => JSON.stringify({ type: pick(['ramp.purchase.completed', 'RAMP_WIDGET.V1.PAYMENT.SETTLED', ...strings]), data: values(), id: values(), created_at: values() }),
        () => JSON.stringify({ email: values(), metadata: values() }),
        () => JSON.stringify(values()),
        () => pick(strings),
        () => '{"a":'.repeat(Math.floor(rnd() * 3000)),
        () => Buffer.from(Array.from({ length: 64 }, () => Math.floor(rnd() * 256))).toString('latin1'),
      ])();
    const statuses = new Map<number, number>();
    const send = async () => {
      const headers: Record<string, string> = {};
      if (rnd() < 0.8) headers['content-type'] = pick(['application/json', 'text/plain', 'application/problem+json', 'application/json; charset=utf-16', '']);
      if (rnd() < 0.5) headers.authorization = pick([`Bearer ${token}`, 'Bearer ', `Bearer ${token}.x`, 'Basic YTpi', `Bearer ${'a'.repeat(300)}`]);
      if (rnd() < 0.5) headers['idempotency-key'] = pick([randomUUID(), `"${randomUUID()}"`, 'not-a-uuid', '']);
      if (rnd() < 0.2) headers['last-event-id'] = pick(['-1', 'abc', '1e9', '99999999999999999999', '']);
      if (rnd() < 0.2) headers['x-zbd-signature'] = pick(['sha256=00', `sha256=${'0'.repeat(64)}`, 'md5=x']);
      const method = pick(['GET', 'POST', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']);
      const controller = new AbortController();
      try {
        const r = await fetch(relay.url + pick(paths), {
          method,
          headers,
          ...(method === 'GET' || method === 'HEAD' ? {} : { body: bodies() }),
          signal: controller.signal,
        });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        // An event stream that opened stays open: that is an answer too.
        if (r.headers.get('content-type')?.includes('event-stream')) controller.abort();
        else await r.arrayBuffer();
      } catch (err) {
        if ((err as Error).name !== 'AbortError') throw err;
      }
    };
    for (let batch = 0; batch < 100; batch++) await Promise.all(Array.from({ length: 50 }, send));
    const total = [...statuses.values()].reduce((a, n) => a + n, 0);
    const fivexx = [...statuses].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0);
    console.log(`fuzz: ${total} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
    expect(total).toBe(5000);
    expect(fivexx).toBe(0);
    expect(relay.sandbox!.payments()).toHaveLength(0);
  }, 120_000);
});
