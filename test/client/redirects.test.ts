import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage, type RewardStorage } from '../../src/client/node.js';
import type { PlayerSession } from '../../src/wire/relay-api.js';
import { busMaker, next } from '../helpers/client.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

let relay: TestRelay | undefined;
let redirector: Server | undefined;
let relayUrl = '';
/** Requests the old address redirected. */
let redirected = 0;
const { bus, destroyAll } = busMaker(() => relayUrl, memoryStorage);
afterEach(async () => {
  destroyAll();
  redirector?.close();
  redirector = undefined;
  await relay?.stop();
  relay = undefined;
});

/** The game's old address, where the operator's nginx now says `return 301 https://…$request_uri`: every request sent on, as 301. */
async function movedPermanently(to: string): Promise<string> {
  redirector = createServer((req, res) => {
    redirected++;
    res.writeHead(301, { location: to + req.url, 'content-type': 'text/html' });
    res.end('<html><body>301 Moved Permanently</body></html>');
  });
  await new Promise<void>((r) => redirector!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
}

describe('a relayUrl the operator’s proxy redirects (http:// moved to https://)', () => {
  it('keeps a claim whose token renews through the redirect, and the mended address pays it once', async () => {
    relay = await startTestRelay();
    const storage: RewardStorage = memoryStorage();
    relayUrl = relay.url;
    const first = bus({ storage });
    const player = await first.link('alice');
    first.destroy();
    // The token lapsed; the game now reaches the relay at its old address, redirected.
    await storage.setMany([[`session:${player.userId}`, { ...player, expiresAt: new Date(0).toISOString() } satisfies PlayerSession]]);
    relayUrl = await movedPermanently(relay.url);
    const b = bus({ storage });
    const ended: string[] = [];
    for (const e of ['reward:paid', 'reward:rejected', 'reward:failed', 'reward:review'] as const) b.on(e, (o) => ended.push(`${e} ${o.reason ?? ''}`.trim()));
    redirected = 0;
    const id = b.unlock('first-coin')!;
    await expect.poll(() => (ended.length ? Infinity : redirected), { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    // Before, fetch followed the 301 as a GET: the renewal's POST /v1/players became a GET the
    // relay answers 405, taken for the player gone: 'reward:rejected player_unknown', deleted.
    expect(ended).toEqual([]);
    expect(b.pending().map((i) => i.id)).toEqual([id]);
    b.destroy();
    relayUrl = relay.url;
    const mended = bus({ storage });
    const paid = next(mended, 'reward:paid');
    expect((await paid).intent.id).toBe(id);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it('fails link() with relay_unreachable, naming the redirect and where it goes', async () => {
    relay = await startTestRelay();
    relayUrl = await movedPermanently(relay.url);
    const linking = bus().link('alice');
    // Before: method_not_allowed, the relay's answer to the GET the redirect made of it.
    await expect(linking).rejects.toMatchObject({ code: 'relay_unreachable' });
    await expect(linking).rejects.toThrow(`${relayUrl}/v1/players answered 301 (text/html) redirecting to ${relay.url}/v1/players, not the relay: check relayUrl`);
  });
});

describe('a relayUrl whose path the proxy passes on as it is (nginx `location /rewards/ { proxy_pass http://relay; }`)', () => {
  it('keeps a claim the relay answers 404 not_found at that path, and the mended address pays it once', async () => {
    relay = await startTestRelay();
    const storage: RewardStorage = memoryStorage();
    relayUrl = relay.url;
    const first = bus({ storage });
    await first.link('alice');
    first.destroy();
    // The relay sees /rewards/v1/rewards: no such route (its own 404 problem document).
    relayUrl = `${relay.url}/rewards`;
    const b = bus({ storage });
    const ended: string[] = [];
    for (const e of ['reward:paid', 'reward:rejected', 'reward:failed', 'reward:review'] as const) b.on(e, (o) => ended.push(`${e} ${o.reason ?? ''}`.trim()));
    let sent = 0;
    b.on('reward:sent', () => sent++);
    const id = b.unlock('first-coin')!;
    await expect.poll(() => (ended.length ? Infinity : sent), { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    // Before: 'reward:rejected not_found', deleted, though no relay decided anything of it.
    expect(ended).toEqual([]);
    expect(b.pending().map((i) => i.id)).toEqual([id]);
    b.destroy();
    relayUrl = relay.url;
    const paid = next(bus({ storage }), 'reward:paid');
    expect((await paid).intent.id).toBe(id);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });
});
