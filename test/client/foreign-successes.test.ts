import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/client/node.js';
import { busesOnTestRelay, lapsedPlayer, next } from '../helpers/client.js';
import { heardOutcomes, otherServerFirst } from '../helpers/other-server.js';

const { bus, start } = busesOnTestRelay(memoryStorage);

describe('a success that is not the relay’s', () => {
  // nginx's `error_page 502 503 =200 /maintenance.html` (or a CDN's "always online" copy) answers
  // 200 with a page while the relay restarts: a success by its status, no answer of the relay's.
  it('sends a claim again when its token’s renewal is answered 200 by a maintenance page, and pays it once', async () => {
    const relay = await start();
    const storage = await lapsedPlayer(bus, memoryStorage());
    const net = otherServerFirst('/v1/players', 200, 1);
    const b = bus({ storage, fetch: net.fetch });
    const errors: Error[] = [];
    b.on('error', (e) => errors.push(e));
    const paid = next(b, 'reward:paid');
    const id = b.unlock('first-coin');
    // Before, reading the page as a session threw (a TypeError on the bus's error event), and the
    // queue stopped there: the intent stayed unsent until something else flushed it.
    expect((await paid).intent.id).toBe(id);
    expect(errors).toEqual([]);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it('takes a catalog answered 200 by a maintenance page as none yet: a guest in balance mode earns once the relay is back', async () => {
    await start({ RELAY_PAYOUT_MODE: 'balance' });
    const net = otherServerFirst('/v1/catalog', 200, 1, { method: 'GET' });
    const b = bus({ fetch: net.fetch });
    const errors: Error[] = [];
    b.on('error', (e) => errors.push(e));
    const credited = next(b, 'reward:credited');
    b.unlock('first-coin');
    // The relay back: the next unlock (or coming online) asks for the catalog again.
    await expect.poll(() => net.seen.foreign).toBe(1);
    await new Promise((r) => setTimeout(r, 50));
    b.unlock('first-coin');
    // Before, the failed read of the page was kept as the catalog's answer for the whole session:
    // the relay's mode never known, no guest made, nothing sent.
    await credited;
    expect(errors).toEqual([]);
    expect((await b.catalog()).length).toBeGreaterThan(0);
  });

  it('sends a withdrawal again under its key when a proxy answers 200 with a page after the relay paid it: said paid, paid once', async () => {
    const relay = await start({ RELAY_PAYOUT_MODE: 'balance', RELAY_MIN_WITHDRAWAL_SATS: '10' });
    const net = otherServerFirst('/v1/withdrawals', 200, 1, { passOn: true });
    const b = bus({ fetch: net.fetch });
    await b.link('ada');
    const credited = next(b, 'reward:credited');
    b.unlock('first-coin');
    await credited;
    const paid: number[] = [];
    b.on('withdrawal:paid', (w) => paid.push(w.withdrawal.sats));
    // Before, withdraw() failed with a TypeError (the page read as a withdrawal): the player was
    // never told of the sats that had left.
    expect(await b.withdraw()).toMatchObject({ sats: 21, status: 'paid' });
    expect(net.seen).toEqual({ foreign: 1, through: 1 });
    expect(paid).toEqual([21]);
    expect(relay.sandbox!.payments().filter((p) => p.gamertag === 'ada')).toHaveLength(1);
  });

  it('keeps a claim another server answered 200 {"status":"ok"}, and it is paid once when the relay answers', async () => {
    const relay = await start();
    let other = 1;
    const b = bus({
      fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
        // The game's own backend, say, which answers any POST it does not know with its health.
        if (new URL(String(input)).pathname === '/v1/rewards' && init?.method === 'POST' && other-- > 0) return Response.json({ status: 'ok' });
        return fetch(input, init);
      }) as typeof fetch,
    });
    await b.link('alice');
    const events = heardOutcomes(b);
    const paid = next(b, 'reward:paid');
    const id = b.unlock('first-coin');
    // Before, 'ok' was read as a status this client does not know: said reward:review and deleted,
    // a review no relay had, so never settled.
    expect((await paid).intent.id).toBe(id);
    expect(events).toEqual(['reward:paid']);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });

  it('sends a withdrawal again under its key when another server answered it 200 {"status":"ok"}: said paid, paid once', async () => {
    const relay = await start({ RELAY_PAYOUT_MODE: 'balance', RELAY_MIN_WITHDRAWAL_SATS: '10' });
    let other = 1;
    const b = bus({
      fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
        if (new URL(String(input)).pathname === '/v1/withdrawals' && init?.method === 'POST' && other-- > 0) return Response.json({ status: 'ok' });
        return fetch(input, init);
      }) as typeof fetch,
    });
    await b.link('ada');
    const credited = next(b, 'reward:credited');
    b.unlock('first-coin');
    await credited;
    const said: string[] = [];
    for (const e of ['withdrawal:paid', 'withdrawal:failed', 'withdrawal:review'] as const) b.on(e, () => said.push(e));
    // Before, withdraw() resolved with { status: 'ok' } and said withdrawal:review: nothing had been asked of the relay.
    expect(await b.withdraw()).toMatchObject({ sats: 21, status: 'paid' });
    expect(said).toEqual(['withdrawal:paid']);
    expect(relay.sandbox!.payments().filter((p) => p.gamertag === 'ada')).toHaveLength(1);
  });
});
