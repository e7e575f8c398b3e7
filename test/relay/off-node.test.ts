// Finding 3 of issue 34: off Node (Bun, Deno, edge runtimes) the relay gets requests without a
// socket. Every client was then one address ('local'): one bucket for the whole game. Each test
// calls relay.fetch itself, with no socket, as those runtimes do; the payments service is the
// sandbox over HTTP.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerType, serve } from '@hono/node-server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, createRelay, type RelayOptions } from '../../src/relay/index.js';
import { createSandbox } from '../../src/sandbox/index.js';

type Line = { level: number; event?: string; msg?: string; [k: string]: unknown };
const API_KEY = `k_${randomUUID()}`;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.unstubAllGlobals();
  for (const close of closers.splice(0).reverse()) await close();
});

async function service(): Promise<string> {
  const sandbox = createSandbox({ apiKey: API_KEY });
  const server: ServerType = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A relay called only through relay.fetch, as Bun, Deno or an edge runtime would call it. */
async function relayWithoutSocket(options: Partial<RelayOptions> = {}) {
  const logs: Line[] = [];
  const logger = createLogger('debug', { write: (line: string) => void logs.push(JSON.parse(line) as Line) });
  const relay = createRelay({
    payments: { baseUrl: await service(), apiKey: API_KEY, timeoutMs: 2000 },
    store: join(mkdtempSync(join(tmpdir(), 'rewardbus-off-node-')), 'ledger.sqlite'),
    secret: randomUUID(),
    rateLimitPerMinute: 3,
    linksPerAddressPerDay: 3,
    logger,
    ...options,
  });
  closers.push(() => relay.close());
  await relay.ready;
  const link = async (gamertag: string, headers: Record<string, string> = {}, env?: unknown) => {
    const request = new Request('http://relay.test/v1/players', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ gamertag }),
    });
    return (await relay.fetch(request, env)).status;
  };
  return { relay, logs, link };
}

const warnings = (logs: Line[]) => logs.filter((l) => l.event === 'client_address_unknown');

describe('off Node: requests without a socket', () => {
  it('Off Node: 10 clients through relay.fetch with no socket are not one bucket (10 × 201 under 3/min, 3 links per address); one warning names clientAddress', async () => {
    const { logs, link } = await relayWithoutSocket();
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await link(`player-${i}`));
    expect(answers).toEqual(Array(10).fill(201));
    expect(warnings(logs)).toHaveLength(1);
    const [warning] = warnings(logs);
    expect(warning).toMatchObject({ level: 40, option: 'clientAddress' });
    expect(warning!.msg).toMatch(/NO CLIENT ADDRESS.*RELAY_RATE_LIMIT_PER_MINUTE.*RELAY_LINKS_PER_ADDRESS_PER_DAY.*createRelay\(\{ clientAddress\(request, env\)/);
  });

  it('Off Node: with clientAddress(request, env), each client counts under its own address, IPv6 by /64; no warning', async () => {
    const { logs, link } = await relayWithoutSocket({
      // As on Cloudflare (a header the platform sets), or on Deno (the info passed to fetch).
      clientAddress: (request, env) => request.headers.get('cf-connecting-ip') ?? (env as { remoteAddr?: { hostname: string } } | undefined)?.remoteAddr?.hostname,
    });
    const one = [];
    for (let i = 0; i < 5; i++) one.push(await link(`one-${i}`, { 'cf-connecting-ip': `2001:db8:7:7::${i + 1}` }));
    expect(one).toEqual([201, 201, 201, 429, 429]);
    expect(await link('other', { 'cf-connecting-ip': '203.0.113.9' })).toBe(201);
    const deno = [];
    for (let i = 0; i < 4; i++) deno.push(await link(`deno-${i}`, {}, { remoteAddr: { hostname: '198.51.100.4' } }));
    expect(deno).toEqual([201, 201, 201, 429]);
    expect(warnings(logs)).toEqual([]);
  });

  it('Off Node: on a runtime that plainly gives no socket (Bun here), the warning comes at start, before any request', async () => {
    vi.stubGlobal('Bun', {});
    const { logs, link } = await relayWithoutSocket();
    expect(warnings(logs)).toHaveLength(1);
    expect(warnings(logs)[0]!.msg).toMatch(/NO CLIENT ADDRESS on this runtime/);
    expect(await link('after-start')).toBe(201);
    expect(warnings(logs)).toHaveLength(1);
  });

  it('Off Node: with every address limit off, no warning', async () => {
    const { logs, link } = await relayWithoutSocket({ rateLimitPerMinute: 0, linksPerAddressPerDay: 0, webhookRateLimitPerMinute: 0, streamCaps: { perAddress: 0 } });
    expect(await link('quiet')).toBe(201);
    expect(warnings(logs)).toEqual([]);
  });

  it('Off Node: relay.close() ends the event streams it opened, so their clients reconnect to another relay (nothing else can end them)', async () => {
    const { relay } = await relayWithoutSocket({ rateLimitPerMinute: 0 });
    const linked = await relay.fetch(new Request('http://relay.test/v1/players', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"gamertag":"zed"}' }));
    const { token } = (await linked.json()) as { token: string };
    const stream = await relay.fetch(new Request('http://relay.test/v1/events', { headers: { authorization: `Bearer ${token}` } }));
    expect(stream.status).toBe(200);
    let state = 'open';
    void stream.body!.pipeTo(new WritableStream()).then(() => (state = 'ended'));
    await relay.close();
    // Left open, it would hear nothing more (its hub is gone) and its client would never reconnect.
    await expect.poll(() => state).toBe('ended');
  });
});
