import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corsCheck, originAllowed } from '../../src/relay/http/middleware/cors.js';
import type { Health } from '../../src/wire/relay-api.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

const GAME = 'https://game.example.com';
const ELSEWHERE = 'https://new-domain.example.com';

describe('a refused origin is loud', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startTestRelay({ RELAY_ALLOWED_ORIGINS: GAME });
  });
  afterAll(() => relay.stop());

  const health = async (origin?: string) => {
    const r = await fetch(`${relay.url}/v1/health`, origin ? { headers: { origin } } : {});
    return { cors: r.headers.get('access-control-allow-origin'), body: (await r.json()) as Health };
  };

  it('/v1/health says whether the caller may call, and is readable from any origin to say it', async () => {
    expect(await health(GAME)).toMatchObject({ cors: GAME, body: { ok: true, originAllowed: true } });
    expect(await health(ELSEWHERE)).toMatchObject({ cors: ELSEWHERE, body: { ok: true, originAllowed: false } });
    expect((await health()).body.originAllowed).toBe(true);
    // Anything else stays closed to that origin.
    const catalog = await fetch(`${relay.url}/v1/catalog`, { headers: { origin: ELSEWHERE } });
    expect(catalog.headers.get('access-control-allow-origin')).toBeNull();
  });

  // The client's repeat rules count by the relay's clock, read in its answers' Date (client/delivery/relay-clock.ts).
  it("lets a game on another origin read the relay's clock, a replay and Retry-After in its answers", async () => {
    const r = await fetch(`${relay.url}/v1/catalog`, { headers: { origin: GAME } });
    expect(r.headers.get('access-control-allow-origin')).toBe(GAME);
    expect(r.headers.get('access-control-expose-headers')?.split(/,\s*/)).toEqual(expect.arrayContaining(['Date', 'Idempotent-Replayed', 'Retry-After']));
  });

  it('is logged once per origin per minute, naming RELAY_ALLOWED_ORIGINS and the origin', async () => {
    for (let i = 0; i < 3; i++) await fetch(`${relay.url}/v1/catalog`, { headers: { origin: 'https://third.example.com' } });
    const lines = relay.logs
      .map((l) => JSON.parse(l) as { event?: string; origin?: string; msg: string })
      .filter((l) => l.event === 'origin_refused' && l.origin === 'https://third.example.com');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.msg).toBe('refused a browser call from https://third.example.com: add it to RELAY_ALLOWED_ORIGINS to allow it (said once a minute per origin)');
  });
});

describe('originAllowed and the log, by the minute', () => {
  it('allows *, a listed origin, the relay itself and a caller without an Origin', () => {
    const at = (origin?: string) => new Request('http://relay.example.com:8787/v1/health', origin ? { headers: { origin } } : {});
    expect(originAllowed([GAME], at(GAME))).toBe(true);
    expect(originAllowed([GAME], at(ELSEWHERE))).toBe(false);
    expect(originAllowed(['*'], at(ELSEWHERE))).toBe(true);
    expect(originAllowed([], at('http://relay.example.com:8787'))).toBe(true);
    expect(originAllowed([], at())).toBe(true);
  });

  it('says a refused origin again after a minute, and each origin apart', async () => {
    let t = 0;
    const said: string[] = [];
    const cors = corsCheck([GAME], { warn: ((o: { origin: string }) => void said.push(o.origin)) as never }, () => t);
    const app = new Hono()
      .use('*', async (c, next) => {
        const preflight = cors(c, c.req.path);
        if (preflight) return preflight;
        await next();
      })
      .get('*', (c) => c.text('ok'));
    const call = (origin: string) => app.request('/v1/catalog', { headers: { origin } });
    await call(ELSEWHERE);
    await call(ELSEWHERE);
    await call('https://other.example.com');
    await call(GAME);
    t += 60_000;
    await call(ELSEWHERE);
    expect(said).toEqual([ELSEWHERE, 'https://other.example.com', ELSEWHERE]);
  });
});
