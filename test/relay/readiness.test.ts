import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createLogger, createRelay, openPgStore, openSqliteStore } from '../../src/relay/index.js';
import { freshDatabase } from '../helpers/postgres.js';
import { createReadiness } from '../../src/relay/ops/readiness.js';
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
    const store = await openPgStore(await freshDatabase(inject('postgresUrl')), { owner: 'ping-test', leaseMs: 60_000 });
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
    const relay = createRelay({
      payments: { apiKey: 'k', baseUrl: 'http://127.0.0.1:9', timeoutMs: 500 },
      store: openSqliteStore(join(dir, 'ledger.sqlite')),
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
