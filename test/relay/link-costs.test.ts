// Finding 2 of issue 34: a refused link costs nothing. The rate limit, the address's links today
// and the human check (verifyLink) all come before the relay asks the payments service who the
// gamertag is; a hook that fails is a 503 the client can retry, and it can read the request.
import { afterEach, describe, expect, it } from 'vitest';
import type { VerifyLink } from '../../src/relay/index.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

let relay: TestRelay | undefined;
afterEach(async () => {
  await relay?.stop();
  relay = undefined;
});

const link = (gamertag: string, extra: Record<string, string> = {}) =>
  fetch(`${relay!.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag, ...extra }) });

/** How often the relay asked the payments service for a gamertag's userId (its own metrics). */
async function lookups(): Promise<number> {
  const text = await (await fetch(`${relay!.url}/metrics`, { headers: { authorization: `Bearer ${relay!.adminToken}` } })).text();
  return Number(/^rewardbus_service_call_seconds_count\{call="user_id"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

describe('a refused link costs nothing', () => {
  it('Link: 200 attempts from a capped address make 0 lookups and 0 human checks (429 too_many_players); linking a linked player again is free', async () => {
    const checks: string[] = [];
    const verifyLink: VerifyLink = (_request, { gamertag }) => {
      checks.push(gamertag);
      return true;
    };
    relay = await startTestRelay({ RELAY_LINKS_PER_ADDRESS_PER_DAY: '2' }, { relay: { verifyLink } });
    expect([(await link('first')).status, (await link('second')).status]).toEqual([201, 201]);
    expect([await lookups(), checks.length]).toEqual([2, 2]);
    const refused = new Map<string, number>();
    for (let i = 0; i < 200; i++) {
      const r = await link(`farmed-${i}`);
      const { code } = (await r.json()) as { code?: string };
      refused.set(`${r.status} ${code} ${r.headers.get('content-type')}`, (refused.get(`${r.status} ${code} ${r.headers.get('content-type')}`) ?? 0) + 1);
    }
    expect(Object.fromEntries(refused)).toEqual({ '429 too_many_players application/problem+json': 200 });
    expect([await lookups(), checks.length]).toEqual([2, 2]);
    // A player this address linked today links again (the hook is asked, the service too).
    expect((await link('first')).status).toBe(201);
    expect([await lookups(), checks.length]).toEqual([3, 3]);
  });

  it('Link: past the rate limit, no lookup either', async () => {
    relay = await startTestRelay({ RELAY_RATE_LIMIT_PER_MINUTE: '3' });
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push((await link(`rated-${i}`)).status);
    expect(answers).toEqual([201, 201, 201, ...Array(7).fill(429)]);
    expect(await lookups()).toBe(3);
  });

  it('Link: two links at once from an address with one place left: one 201, the others 429', async () => {
    relay = await startTestRelay({ RELAY_LINKS_PER_ADDRESS_PER_DAY: '1' });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => link(`racer-${i}`).then((r) => r.status)));
    expect(answers.sort()).toEqual([201, 429, 429, 429, 429, 429]);
  });

  it('Link: a verifyLink that throws answers 503 link_check_unavailable (problem+json, Retry-After), no lookup, logged', async () => {
    relay = await startTestRelay({}, { relay: { verifyLink: () => Promise.reject(new Error('captcha service down')) } });
    const r = await link('unlucky', { humanCheck: 'token' });
    expect([r.status, r.headers.get('content-type'), Number(r.headers.get('retry-after')) > 0]).toEqual([503, 'application/problem+json', true]);
    expect(((await r.json()) as { code: string }).code).toBe('link_check_unavailable');
    expect(await lookups()).toBe(0);
    expect(relay.logs.some((l) => l.includes('"event":"link_check_failed"') && l.includes('captcha service down'))).toBe(true);
  });

  it('Link: verifyLink can read the request: its body, its headers', async () => {
    const read: unknown[] = [];
    relay = await startTestRelay(
      {},
      {
        relay: {
          verifyLink: async (request, { humanCheck }) => {
            read.push(await request.json(), request.headers.get('content-type'), request.method);
            return humanCheck === 'human';
          },
        },
      },
    );
    expect((await link('reader', { humanCheck: 'human' })).status).toBe(201);
    expect(read).toEqual([{ gamertag: 'reader', humanCheck: 'human' }, 'application/json', 'POST']);
  });
});
