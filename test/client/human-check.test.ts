// A relay with a human check at link (`verifyLink`, a captcha): the client's link() carries the check.
import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/client/node.js';
import type { VerifyLink } from '../../src/relay/index.js';
import { busesOnTestRelay, noPlayTime } from '../helpers/client.js';

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
});
