// The client's side of referrals (issue 37): a player's code, and a new player's link with it.
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { memoryStorage, RewardBusError } from '../../src/client/node.js';
import { DEFAULT_CATALOG } from '../../src/relay/index.js';
import { busesOnTestRelay, next } from '../helpers/client.js';

const { bus, start } = busesOnTestRelay(memoryStorage);
/** A device behind its own address (the relay trusts the loopback proxy): two players on one address would be a self-referral. */
const from =
  (address: string): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('x-forwarded-for', address);
    return fetch(input, { ...init, headers });
  };
const PROGRAM = { id: 'invite', kind: 'referral' as const, title: 'Invite a friend', referrerSats: 100, refereeSats: 50, afterPlaySeconds: 0, afterAchievement: 'first-coin' };

describe('referrals from the bus', () => {
  it('referralCode() is the linked player’s code; link(gamertag, { referralCode }) says pending; the first coin pays both', async () => {
    await start({ RELAY_TRUST_PROXY: '127.0.0.1' }, { relay: { catalog: [...DEFAULT_CATALOG, PROGRAM] } });
    const alice = bus({ fetch: from('198.51.100.1') });
    await alice.link('alice');
    const code = await alice.referralCode();
    expect(await alice.referralCode()).toBe(code);

    // Buses share the page's tab channel: one player at a time, as in one browser.
    alice.destroy();
    const bob = bus({ fetch: from('203.0.113.5') });
    const session = await bob.link('bob', { referralCode: code });
    expect(session.referral).toBe('pending');
    const paid = next(bob, 'reward:paid');
    bob.unlock('first-coin');
    await paid;
    await expect.poll(async () => (await bob.history()).filter((r) => r.referral === 'referee').map((r) => [r.status, r.sats])).toEqual([['paid', 50]]);
    bob.destroy();
    const aliceAgain = bus({ fetch: from('198.51.100.1') });
    await aliceAgain.link('alice');
    await expect.poll(async () => (await aliceAgain.history()).filter((r) => r.referral === 'referrer').map((r) => [r.status, r.sats])).toEqual([['paid', 100]]);
  });

  it('a relay without a program has no codes: referralCode() rejects with a RewardBusError', async () => {
    await start();
    const alice = bus();
    await alice.link('alice');
    await expect(alice.referralCode()).rejects.toBeInstanceOf(RewardBusError);
  });
});
