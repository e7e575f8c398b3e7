import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { idbStorage } from '../../src/client/node.js';
import { toastText } from '../../src/phaser/toast-text.js';
import { busMaker, controlledFetch, next } from '../helpers/client.js';
import { startTestRelay, type TestRelay } from '../helpers/relay.js';

// A login streak (issue 37) from the game's side, against a real relay (the default catalog's
// `login`): the catalog shows its steps, the paid record its day, and a second unlock the same
// UTC day makes no request (the client applies the relay's rule first: once per UTC day).
let relay: TestRelay | undefined;
let n = 0;
const { bus, destroyAll } = busMaker(
  () => relay!.url,
  () => idbStorage(`rewardbus-streak-${++n}`),
);
afterEach(async () => {
  destroyAll();
  await relay?.stop();
  relay = undefined;
});

describe('a login streak in the game', () => {
  it('shows its steps in the catalog, toasts its day, and sends no request for a second unlock the same UTC day', async () => {
    relay = await startTestRelay();
    const net = controlledFetch();
    const b = bus({ fetch: net.fetch });
    await b.link('alice');
    const login = (await b.catalog()).find((a) => a.id === 'login');
    expect(login).toMatchObject({ sats: 10, repeat: { kind: 'streak', sats: [10, 20, 30, 50] } });

    const paid = next(b, 'reward:paid');
    const id = b.unlock('login');
    const outcome = await paid;
    expect(outcome).toMatchObject({ sats: 10, record: { status: 'paid', achievementId: 'login', streakDay: 1, sats: 10 } });
    expect(toastText('reward:paid', outcome, login!.title)).toBe('Day 1 streak · +10 sats');

    const skipped: Array<{ achievementId: string; reason: string }> = [];
    b.on('reward:skipped', (e) => skipped.push(e));
    expect(b.unlock('login')).toBeUndefined();
    expect(skipped).toEqual([expect.objectContaining({ achievementId: 'login', reason: 'already_claimed_today' })]);
    await b.flush();
    expect([...net.claims.entries()]).toEqual([[id, 1]]);
    expect(relay.sandbox!.payments()).toHaveLength(1);
  });
});
