import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { RelayEnv } from '../../src/relay/http/context.js';
import { operatorName, requireAdmin } from '../../src/relay/http/middleware/admin-auth.js';
import { problemResponse, type RelayProblem } from '../../src/relay/http/problems.js';
import { startTestRelay } from '../helpers/relay.js';

const TOKEN = 'the-operator-token-of-32-characters-or-more';
const NEXT = 'the-next-operator-token-of-32-characters-or-more';

/** A guarded route; each request comes from the address in its X-Test-Address header. */
function guarded(tokens: string, failuresPerMinute?: number) {
  let t = 1_000_000;
  const app = new Hono<RelayEnv>();
  app.use('*', async (c, next) => {
    c.set('clientKey', c.req.header('x-test-address') ?? '10.0.0.1');
    await next();
  });
  app.use('*', requireAdmin(tokens, { ...(failuresPerMinute ? { failuresPerMinute } : {}), now: () => t }));
  app.get('/metrics', (c) => c.text('ok'));
  app.onError((err, c) => problemResponse(c, err as RelayProblem));
  const call = (token: string, address = '10.0.0.1') => app.request('/metrics', { headers: { authorization: `Bearer ${token}`, 'x-test-address': address } });
  return { call, pass: (ms: number) => (t += ms) };
}

describe('the operator token', () => {
  it('never locks out a scraper with the right token: 500 calls in a minute all pass', async () => {
    const { call } = guarded(TOKEN);
    const statuses = new Set<number>();
    for (let i = 0; i < 500; i++) statuses.add((await call(TOKEN)).status);
    expect([...statuses]).toEqual([200]);
  });

  it('counts wrong tokens per address: past the limit the address waits out the minute, others do not', async () => {
    const { call, pass } = guarded(TOKEN, 10);
    for (let i = 0; i < 10; i++) expect((await call(`guess-${i}`)).status).toBe(401);
    const refused = await call('guess-10');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The right token too, or each guess would still be answered.
    expect((await call(TOKEN)).status).toBe(429);
    expect((await call(TOKEN, '10.0.0.2')).status).toBe(200);
    pass(60_000);
    expect((await call(TOKEN)).status).toBe(200);
  });

  it('defaults to 10 wrong tokens a minute', async () => {
    const { call } = guarded(TOKEN);
    const statuses = [];
    for (let i = 0; i < 12; i++) statuses.push((await call('guess')).status);
    expect(statuses).toEqual([...Array(10).fill(401), 429, 429]);
  });

  it('rotates: NEW,OLD accepts both; a token no longer listed is refused', async () => {
    const both = guarded(`${NEXT},${TOKEN}`);
    expect((await both.call(TOKEN)).status).toBe(200);
    expect((await both.call(NEXT)).status).toBe(200);
    expect((await guarded(NEXT).call(TOKEN)).status).toBe(401);
  });
});

describe('the operator token on a running relay', () => {
  it('stands on RELAY_ADMIN_FAILURES_PER_MINUTE, even with RELAY_RATE_LIMIT_PER_MINUTE=0; 100 scrapes pass', async () => {
    const relay = await startTestRelay({ RELAY_ADMIN_TOKEN: TOKEN, RELAY_ADMIN_FAILURES_PER_MINUTE: '3', RELAY_RATE_LIMIT_PER_MINUTE: '0' });
    try {
      const scrape = (token: string) => fetch(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
      const scrapes = await Promise.all(Array.from({ length: 100 }, () => scrape(TOKEN)));
      expect(new Set(scrapes)).toEqual(new Set([200]));
      const guesses = [];
      for (let i = 0; i < 4; i++) guesses.push(await scrape(`guess-${i}`));
      expect(guesses).toEqual([401, 401, 401, 429]);
    } finally {
      await relay.stop();
    }
  });
});

describe("the operator's name (X-Operator)", () => {
  it('takes percent-encoded UTF-8, as RFC 8187 or encodeURIComponent spell it, and raw UTF-8 bytes', () => {
    expect(operatorName("UTF-8''%E6%9D%8E%E9%9B%B7")).toBe('李雷');
    expect(operatorName(encodeURIComponent('李雷'))).toBe('李雷');
    expect(operatorName(encodeURIComponent('Zoë Ö'))).toBe('Zoë Ö');
    expect(operatorName(Buffer.from('李雷').toString('latin1'))).toBe('李雷');
  });

  it('keeps plain names, survives malformed encodings, drops control characters, bounds the length', () => {
    expect(operatorName('alice')).toBe('alice');
    expect(operatorName('Zoë')).toBe('Zoë');
    expect(operatorName('100% sure')).toBe('100% sure');
    expect(operatorName("UTF-8''%E6%9D")).toBe('operator');
    expect(operatorName('%0Aevil%0D%00')).toBe('evil');
    expect(operatorName(undefined)).toBe('operator');
    expect(operatorName('   ')).toBe('operator');
    expect([...operatorName(encodeURIComponent('李'.repeat(500)))]).toHaveLength(64);
  });
});
