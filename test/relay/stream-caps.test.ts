import { afterEach, describe, expect, it } from 'vitest';
import { heldStreams } from '../helpers/held-streams.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

let relay: TestRelay | undefined;
const streams = heldStreams();
afterEach(async () => {
  streams.closeAll();
  await relay?.stop();
  relay = undefined;
});

/** Opens an event stream and keeps it open (until the test ends or `close` is called). */
async function stream(token: string) {
  const { response: r, close } = await streams.open(`${relay!.url}/v1/events?token=${encodeURIComponent(token)}`);
  if (r.status !== 200) await r.body?.cancel();
  return { status: r.status, headers: r.headers, close };
}

describe('event streams are capped', () => {
  it('at 5 per player and 20 per address: then 429 problem+json with Retry-After, health still answers, a closed stream frees its place', async () => {
    relay = await startTestRelay();
    const players = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((g) => relay!.link(`streamer-${g}`)));
    const a = [];
    for (let i = 0; i < 5; i++) a.push(await stream(players[0]!.token));
    expect(a.map((s) => s.status)).toEqual([200, 200, 200, 200, 200]);
    const sixth = await stream(players[0]!.token);
    expect([sixth.status, sixth.headers.get('content-type')]).toEqual([429, 'application/problem+json']);
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    // Three more players from the same address: 20 streams in all, then the address is full.
    for (const p of players.slice(1, 4)) for (let i = 0; i < 5; i++) expect((await stream(p.token)).status).toBe(200);
    expect((await stream(players[4]!.token)).status).toBe(429);
    expect((await fetch(`${relay.url}/v1/health`)).status).toBe(200);
    // A player who closes a stream may open one again.
    a[0]!.close();
    await expect.poll(async () => (await stream(players[0]!.token)).status, { timeout: 5000 }).toBe(200);
  });

  it('at the limits the operator sets', async () => {
    relay = await startTestRelay({}, { relay: { streamCaps: { perPlayer: 1, perAddress: 0 } } });
    const player = await relay.link('lonely');
    expect((await stream(player.token)).status).toBe(200);
    expect((await stream(player.token)).status).toBe(429);
  });
});
