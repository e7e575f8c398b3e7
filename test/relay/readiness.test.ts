import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createLogger, createRelay, openPgStore, openSqliteStore } from '../../src/relay/index.js';
import { createReadiness } from '../../src/relay/ops/readiness.js';
import { freshDatabase } from '../helpers/postgres.js';
import { startTestRelay } from '../helpers/relay.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('readiness (the store answers now, the payments service answered recently)', () => {
  it('asks the service at most once per interval, whoever probes, and says why a part is down', async () => {
    let t = 0;
    let calls = 0;
    let answer: 'ok' | 'down' = 'ok';
    const readiness = createReadiness({
      ping: async () => undefined,
      service: async () => {
        calls++;
        return answer === 'ok' ? { kind: 'ok', data: 1 } : { kind: 'unavailable', reason: 'ECONNREFUSED' };
      },
      serviceEveryMs: 10_000,
      now: () => t,
    });
    expect(await readiness.check()).toEqual({ store: { state: 'ok' }, service: { state: 'ok' } });
    answer = 'down';
    await Promise.all([readiness.check(), readiness.check()]);
    t = 9_999;
    expect((await readiness.check()).service.state).toBe('ok');
    expect(calls).toBe(1);
    t = 10_000;
    expect((await readiness.check()).service).toEqual({ state: 'down', reason: 'ECONNREFUSED' });
    expect(calls).toBe(2);
  });

  it('counts a store that does not answer within the timeout as down, and a slow service by its last answer', async () => {
    const readiness = createReadiness({
      ping: () => new Promise(() => undefined),
      service: () => new Promise(() => undefined),
      timeoutMs: 50,
    });
    expect(await readiness.check()).toEqual({ store: { state: 'down', reason: 'no answer in 50 ms' }, service: { state: 'down', reason: 'not checked yet' } });
  });
});

describe("the stores' ping", () => {
  it('SQLite: answers through its thread; rejects once closed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rewardbus-ready-'));
    dirs.push(dir);
    const store = openSqliteStore(join(dir, 'ledger.sqlite'));
    await expect(store.ping()).resolves.toBeUndefined();
    await store.close();
    await expect(store.ping()).rejects.toThrow();
  });

  it.skipIf(!inject('postgresUrl'))('PostgreSQL: SELECT 1 answers; rejects once the pool is closed', async () => {
    const store = await openPgStore(await freshDatabase(inject('postgresUrl'), { migrated: true }), { owner: 'ping-test', leaseMs: 60_000 });
    await expect(store.ping()).resolves.toBeUndefined();
    await store.close();
    await expect(store.ping()).rejects.toThrow();
  });
});

describe('GET /v1/ready', () => {
  it('is 200 on a relay whose store and service answer; /v1/health is too', async () => {
    const relay = await startTestRelay();
    try {
      const r = await fetch(`${relay.url}/v1/ready`);
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ ok: true, store: 'ok', service: 'ok' });
      expect((await fetch(`${relay.url}/v1/health`)).status).toBe(200);
    } finally {
      await relay.stop();
    }
  });

  it('is 503 problem+json with Retry-After naming the service when it cannot be reached, while /v1/health stays 200', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rewardbus-ready-'));
    dirs.push(dir);
    // The store opened first (its thread can take seconds to start on a busy machine): this is about the service.
    const store = openSqliteStore(join(dir, 'ledger.sqlite'));
    await store.opened;
    const relay = createRelay({
      payments: { apiKey: 'k', baseUrl: 'http://127.0.0.1:9', timeoutMs: 500 },
      store,
      secret: 'x'.repeat(32),
      logger: createLogger('silent'),
    });
    try {
      const r = await relay.fetch(new Request('http://relay.test/v1/ready'));
      expect(r.status).toBe(503);
      expect(r.headers.get('content-type')).toBe('application/problem+json');
      expect(r.headers.get('retry-after')).toBe('5');
      const body = (await r.json()) as { code: string; store: string; service: string; detail: string };
      expect(body).toMatchObject({ code: 'not_ready', store: 'ok', service: 'down' });
      expect(body.detail).toMatch(/payments service/);
      expect((await relay.fetch(new Request('http://relay.test/v1/health'))).status).toBe(200);
    } finally {
      await relay.close();
    }
  });

  it('is 503 naming the store when it fails its query', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rewardbus-ready-'));
    dirs.push(dir);
    const store = openSqliteStore(join(dir, 'ledger.sqlite'));
    await store.opened;
    const relay = await startTestRelay({}, { relay: { store: { ...store, ping: () => Promise.reject(new Error('disk gone')) } } });
    try {
      const r = await fetch(`${relay.url}/v1/ready`);
      expect(r.status).toBe(503);
      expect(await r.json()).toMatchObject({ code: 'not_ready', store: 'down', service: 'ok', detail: 'Down: the store (disk gone).' });
    } finally {
      await relay.stop();
      await store.close();
    }
  });
});

// Issue 34, finding 7: a relay told to stop must say so on /v1/ready at once, before it stops
// answering, so a balancer that probes it takes it out of rotation first.
describe('GET /v1/ready while the relay stops (finding 7: a rolling restart that drops nothing)', () => {
  it('relay.drain(): 503 not_ready with "draining": true at once, while every other request is still answered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rewardbus-ready-'));
    dirs.push(dir);
    const relay = await startTestRelay({}, {}, dir);
    try {
      expect((await fetch(`${relay.url}/v1/ready`)).status).toBe(200);
      relay.relay.drain();
      const r = await fetch(`${relay.url}/v1/ready`);
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('5');
      expect(await r.json()).toMatchObject({ code: 'not_ready', draining: true });
      const { token } = await relay.link('still-served');
      expect((await relay.claim(token, { achievementId: 'first-coin' })).body.status).toBe('paid');
    } finally {
      await relay.stop();
    }
  });

  it('a stopping Node server answers /v1/ready 503 not_ready, draining, while a payment under way finishes', async () => {
    let claimed = false;
    const verifyClaim = () => (claimed = true);
    const relay = await startTestRelay({}, { sandbox: { slowMs: 1_000 }, relay: { verifyClaim } });
    const { token } = await relay.link('slowpoke');
    const paying = relay.claim(token, { achievementId: 'first-coin' });
    // The claim is under way (its payout's gamertag lookup waits a second) when the relay is told to stop.
    await expect.poll(() => claimed).toBe(true);
    const stopped = relay.close();
    // On a connection of its own (the pooled ones are closed as they go idle); the embedded
    // sandbox keeps this server listening until its payments are done.
    const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      get(`${relay.url}/v1/ready`, { agent: false }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.once('end', () => resolve({ status: res.statusCode!, body }));
      }).once('error', reject);
    });
    expect(r.status).toBe(503);
    expect(JSON.parse(r.body)).toMatchObject({ code: 'not_ready', draining: true });
    expect((await paying).body.status).toBe('paid');
    expect(await stopped).toMatchObject({ cut: 0 });
  });
});
