// SIGTERM on `rewardbus-relay start`: what a client sees while the relay stops.

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { afterAll, describe, expect, it } from 'vitest';
import { PATHS } from '../../src/contract/payments-api.js';
import { createSandbox } from '../../src/sandbox/index.js';
import { startTestRelay } from '../helpers/relay.js';
import { startRelayCommand } from '../helpers/relay-command.js';

const KEY = `shutdown_${randomUUID()}`;
const dir = mkdtempSync(join(tmpdir(), 'rewardbus-shutdown-'));
const cleanup: Array<() => unknown> = [() => rmSync(dir, { recursive: true, force: true })];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

describe('rewardbus-relay start on SIGTERM', () => {
  it('takes no new connection, answers 503 shutting_down on a busy socket, closes event streams, lets a slow payment finish, exits 0', async () => {
    const sandbox = createSandbox({ apiKey: KEY, slowMs: 1500 });
    // A payout begins with the userId's gamertag: once that lookup is asked, the claim is in flight.
    let payoutLookups = 0;
    const fetchCounted = (request: Request) => {
      if (new URL(request.url).pathname.startsWith(PATHS.gamertagByUserId(''))) payoutLookups++;
      return sandbox.fetch(request);
    };
    const service = serve({ fetch: fetchCounted, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => service.once('listening', r));
    cleanup.push(() => service.close());
    const { child, url } = await startRelayCommand({
      PAYMENTS_API_KEY: KEY,
      PAYMENTS_BASE_URL: `http://127.0.0.1:${(service.address() as AddressInfo).port}`,
      RELAY_PUBLIC_URL: 'https://relay.example.com',
      RELAY_DATA_DIR: dir,
      RELAY_RATE_LIMIT_PER_MINUTE: '0',
      PAYMENTS_TIMEOUT_MS: '4000',
    });
    cleanup.push(() => child.kill('SIGKILL'));
    let logs = '';
    child.stdout!.on('data', (d: Buffer) => void (logs += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

    const link = async (gamertag: string) =>
      (
        (await (await fetch(`${url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag }) })).json()) as {
          token: string;
        }
      ).token;
    const [slow, alice] = await Promise.all([link('slowpoke'), link('alice')]);

    // An event stream, open when the signal comes.
    const stream = await fetch(`${url}/v1/events?token=${encodeURIComponent(alice)}`);
    const streamEnded = stream.body!.pipeTo(new WritableStream()).then(
      () => 'ended',
      () => 'ended',
    );

    // One socket: a claim whose payment takes 1.5 s, then (after the signal) a second request on it.
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    let raw = '';
    socket.on('data', (d) => void (raw += d.toString()));
    const socketClosed = new Promise((r) => socket.once('close', r));
    await new Promise((r) => socket.once('connect', r));
    const body = JSON.stringify({ achievementId: 'first-coin' });
    socket.write(
      `POST /v1/rewards HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nAuthorization: Bearer ${slow}\r\n` +
        `Idempotency-Key: ${randomUUID()}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await expect.poll(() => payoutLookups).toBe(1);

    const signalled = Date.now();
    child.kill('SIGTERM');
    await expect.poll(() => logs).toContain('"event":"shutdown"');
    socket.write('GET /v1/health HTTP/1.1\r\nHost: relay\r\n\r\n');
    // A new connection is refused: the listener is closed.
    await expect(fetch(`${url}/v1/health`)).rejects.toThrow();

    expect(await streamEnded).toBe('ended');
    expect(await exited).toBe(0);
    await socketClosed;
    // The claim was paid and answered; the request after the signal was refused, nothing done.
    const answers = raw.split(/(?=HTTP\/1\.1 )/);
    expect(answers).toHaveLength(2);
    expect(answers[0]).toMatch(/^HTTP\/1\.1 201 /);
    expect(answers[0]).toContain('"status":"paid"');
    expect(answers[1]).toMatch(/^HTTP\/1\.1 503 /);
    expect(answers[1]).toMatch(/connection: close/i);
    expect(answers[1]).toMatch(/retry-after: 1/i);
    expect(answers[1]).toContain('"code":"shutting_down"');
    expect(sandbox.payments()).toHaveLength(1);
    expect(Date.now() - signalled).toBeLessThan(2 * 4000 + 2000);
    const done = logs
      .split('\n')
      .filter((l) => l.includes('"event":"shutdown'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(done.map((l) => l.event)).toEqual(['shutdown', 'shutdown_done']);
    expect(done[0]).toMatchObject({ inFlight: 1, streams: 1 });
    expect(done[1]).toMatchObject({ cut: 0, refused: 1 });
  });
});

describe('an event stream opened by another spelling of its path', () => {
  // The route sees the path as Hono decodes it; the shutdown must know the stream by the same path,
  // or it waits the whole grace for it (every deploy held up by one player) and then cuts it.
  it.each(['/v1/%65vents', 'http://relay/v1/events'])('%s is ended at once as a stream, not waited for and cut', async (target) => {
    const relay = await startTestRelay();
    cleanup.push(() => rmSync(relay.dataDir, { recursive: true, force: true }));
    const { token } = await relay.link('streamer');
    const { hostname, port } = new URL(relay.url);
    const socket = connect(Number(port), hostname);
    cleanup.push(() => socket.destroy());
    let raw = '';
    socket.on('data', (d) => void (raw += d.toString()));
    await new Promise((r) => socket.once('connect', r));
    socket.write(`GET ${target}?token=${token} HTTP/1.1\r\nHost: relay\r\n\r\n`);
    await expect.poll(() => raw).toMatch(/^HTTP\/1\.1 200 [\s\S]*text\/event-stream/);
    const report = await relay.close({ graceMs: 2000 });
    expect(report).toMatchObject({ streams: 1, inFlight: 0, cut: 0 });
    // Ended as a response ends: the last chunk.
    expect(raw).toMatch(/\r\n0\r\n\r\n$/);
  });
});
