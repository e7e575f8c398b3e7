// A relay with a human check at link (`verifyLink`, a captcha): the client's link() carries the
// check, and a lapsed token's renewal that the check refuses keeps the player's intents until the
// game links again with one (found by a red-team pass: they were ended as player_unknown).
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/client/node.js';
import type { VerifyLink } from '../../src/relay/index.js';
import { busesOnTestRelay, lapsedPlayer, next, noPlayTime } from '../helpers/client.js';
import { heardOutcomes } from '../helpers/other-server.js';

const { bus, start } = busesOnTestRelay(memoryStorage);

/**
 * A captcha's verification that passes `ok` only, once `on` (a relay may turn it on after its
 * players linked); `seen`: the humanCheck of every link it was asked about.
 */
function captcha(on = true) {
  const c = { on, seen: [] as Array<string | undefined> };
  const verifyLink: VerifyLink = (_request, { humanCheck }) => {
    if (!c.on) return true;
    c.seen.push(humanCheck);
    return humanCheck === 'ok';
  };
  return Object.assign(c, { relay: { relay: { ...noPlayTime.relay, verifyLink } } });
}

describe('a relay with a human check at link', () => {
  it('link() sends the humanCheck; a check refused rejects with link_refused and links no one', async () => {
    const check = captcha();
    await start({}, check.relay);
    const b = bus();
    await expect(b.link('alice', { humanCheck: 'robot' })).rejects.toMatchObject({ code: 'link_refused' });
    expect(b.player).toBeUndefined();
    const player = await b.link('alice', { humanCheck: 'ok' });
    expect(b.player?.userId).toBe(player.userId);
    expect(check.seen).toEqual(['robot', 'ok']);
  });

  it('keeps a lapsed player’s intent when the check refuses the renewal, says player:check once, and pays it after link() with a check', async () => {
    const check = captcha(false);
    const relay = await start({}, check.relay);
    const storage = await lapsedPlayer(bus, memoryStorage());
    check.on = true;
    const b = bus({ storage });
    const events = heardOutcomes(b);
    const asked: string[] = [];
    b.on('player:check', (e) => asked.push(e.gamertag));
    const id = b.unlock('first-coin');
    // The renewal (a link with no check) reached the relay's check and was refused.
    await expect.poll(() => check.seen.length).toBe(1);
    await b.flush();
    // Before, the refusal made alice unknown: the intent said rejected (player_unknown) and deleted, never paid.
    expect(events).toEqual([]);
    expect(b.pending().map((i) => [i.id, i.attempts])).toEqual([[id, 0]]);
    expect(asked).toEqual(['alice']);
    // No renewal again and again: the bus waits for the game's link (retries are 20 ms apart here).
    b.unlock('daily-login');
    await b.flush();
    await delay(300);
    expect(check.seen).toEqual([undefined]);
    expect(asked).toEqual(['alice']);
    expect(b.pending()).toHaveLength(2);

    const paid = next(b, 'reward:paid');
    await b.link('alice', { humanCheck: 'ok' });
    // Under the key minted at unlock().
    expect((await paid).record).toMatchObject({ idempotencyKey: id, status: 'paid' });
    await expect.poll(() => b.pending()).toEqual([]);
    expect(events).toEqual(['reward:paid', 'reward:paid']);
    expect(relay.sandbox!.payments()).toHaveLength(2);
    expect(check.seen).toEqual([undefined, 'ok']);
  });

  it('balance mode: balance() and withdraw() reject with link_refused, one renewal asked and player:check said once, until link() with a check', async () => {
    const check = captcha(false);
    await start({ RELAY_PAYOUT_MODE: 'balance' }, check.relay);
    const storage = await lapsedPlayer(bus, memoryStorage());
    check.on = true;
    const b = bus({ storage });
    const asked: string[] = [];
    b.on('player:check', (e) => asked.push(e.gamertag));
    await expect(b.balance()).rejects.toMatchObject({ code: 'link_refused' });
    await expect(b.withdraw()).rejects.toMatchObject({ code: 'link_refused' });
    expect(asked).toEqual(['alice']);
    expect(check.seen).toEqual([undefined]);
    await b.link('alice', { humanCheck: 'ok' });
    expect((await b.balance()).sats).toBe(0);
  });
});
