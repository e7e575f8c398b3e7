import { createHmac } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const SECRET = 'body-deadline-secret';
let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

/** Opens a socket to the relay and writes the head of a request whose body is still to come. */
function startUpload(path: string, head: Record<string, string>, firstBytes: string) {
  const { port } = new URL(relay!.url);
  const socket = connect(Number(port), '127.0.0.1');
  let answer = '';
  let closed = false;
  socket.on('data', (d) => (answer += d.toString()));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  const headers = Object.entries({ host: 'relay', 'content-type': 'application/json', ...head })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(`POST ${path} HTTP/1.1\r\n${headers}\r\n${firstBytes}`);
  return { socket: socket as Socket, answer: () => answer, closed: () => closed };
}

describe('a body that does not arrive in time', () => {
  it.each([
    ['with a Content-Length', { 'content-length': '200' }, '{"type":'],
    ['chunked', { 'transfer-encoding': 'chunked' }, '8\r\n{"type":\r\n'],
  ])('%s: is answered 408 problem+json within the deadline, and the socket is closed', async (_name, head, first) => {
    relay = await startTestRelay({ WEBHOOK_SECRET: SECRET }, { relay: { bodyTimeoutMs: 500 } });
    const started = Date.now();
    const upload = startUpload('/v1/webhooks/payments', head, first);
    await expect.poll(upload.closed, { timeout: 5000 }).toBe(true);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(upload.answer()).toMatch(/^HTTP\/1\.1 408 /);
    expect(upload.answer()).toContain('application/problem+json');
    expect(upload.answer()).toContain('"code":"request_timeout"');
  });

  it('does not cut off a body that arrives whole, however it is sent', async () => {
    relay = await startTestRelay({ WEBHOOK_SECRET: SECRET }, { relay: { bodyTimeoutMs: 500 } });
    const raw = '{"id":"evt-ok","type":"ramp.kyc.completed","data":{}}';
    const sig = `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
    const r = await fetch(`${relay.url}/v1/webhooks/payments`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-zbd-signature': sig }, body: raw });
    expect(r.status).toBe(200);
  });
});

describe('headers that never end', () => {
  it("hold a socket 10 s, not Node's 60 s: then 408 problem+json and the socket is closed", async () => {
    relay = await startTestRelay();
    const { port } = new URL(relay.url);
    const socket = connect(Number(port), '127.0.0.1', () => socket.write('GET /v1/health HTTP/1.1\r\nHost: relay\r\n'));
    let answer = '';
    let closed = false;
    socket.on('data', (d) => (answer += d.toString()));
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    await expect.poll(() => closed, { timeout: 14_000, interval: 250 }).toBe(true);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  }, 20_000);
});

describe('a client that gives up on its upload', () => {
  it('is not a 500: logged without an error, counted as 499 in /metrics', async () => {
    relay = await startTestRelay({ WEBHOOK_SECRET: SECRET });
    const upload = startUpload('/v1/webhooks/payments', { 'content-length': '200' }, '{"type":');
    const player = startUpload('/v1/players', { 'content-length': '200' }, '{"gamertag":');
    // Two round trips on other connections: by then the relay is reading both bodies. Then hang up.
    for (let i = 0; i < 2; i++) await (await fetch(`${relay.url}/v1/health`)).text();
    upload.socket.destroy();
    player.socket.destroy();
    const scrape = async () =>
      (await (await fetch(`${relay!.url}/metrics`, { headers: { authorization: `Bearer ${relay!.adminToken}` } })).text())
        .split('\n')
        .filter((l) => l.startsWith('rewardbus_http_requests_total'));
    await expect.poll(async () => (await scrape()).filter((l) => l.includes('status="499"')).length, { timeout: 5000 }).toBe(2);
    expect((await scrape()).filter((l) => l.includes('status="500"'))).toEqual([]);
    const errors = relay.logs.filter((l) => /"level":(50|60)/.test(l));
    expect(errors).toEqual([]);
    expect(relay.logs.join('\n')).not.toContain('"stack"');
  });
});
