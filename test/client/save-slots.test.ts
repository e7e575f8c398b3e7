import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { idbStorage, memoryStorage, type RewardStorage } from '../../src/client/node.js';
import { busesOnTestRelay, everyCoin, next } from '../helpers/client.js';

let slots = 0;
const { bus, start } = busesOnTestRelay(() => memoryStorage());

describe('two queues on one relay in one page (save slots, or two players side by side)', () => {
  it.each([
    ['IndexedDB stores of other names', () => [idbStorage(`slot-a-${++slots}`), idbStorage(`slot-b-${slots}`)]],
    ['two memory stores', () => [memoryStorage(), memoryStorage()]],
  ])("keeps each queue's player: a link on one is not taken up by the other (%s)", async (_, storages) => {
    const relay = await start({}, everyCoin);
    const [slotA, slotB] = storages();
    const b = bus({ storage: slotB });
    await b.link('bob');
    // A second tab of slot A: it takes up A's link, which every tab of the relay heard before.
    const aElsewhere = bus({ storage: slotA });
    await aElsewhere.ready;
    const a = bus({ storage: slotA });
    await a.link('alice');
    await expect.poll(() => aElsewhere.player?.gamertag).toBe('alice');

    expect(b.player?.gamertag).toBe('bob');
    const paid = next(b, 'reward:paid');
    b.unlock('coin');
    expect(await paid).toMatchObject({ gamertag: 'bob', sats: 1 });
    expect(relay.sandbox!.payments().map((p) => p.gamertag)).toEqual(['bob']);
  });

  it('takes up no player another queue linked on the same channel (a tab of an earlier version, a storage of the game’s own with no name)', async () => {
    const relay = await start({}, everyCoin);
    const { name: _named, ...unnamed } = memoryStorage();
    const read: string[] = [];
    const storage: RewardStorage = {
      ...unnamed,
      get: (key) => {
        read.push(key);
        return unnamed.get(key);
      },
    };
    const b = bus({ storage });
    await b.link('bob');
    const alice = await bus({ storage: memoryStorage() }).link('alice');
    // Alice's link, said on the channel of the relay's unnamed queues, by a tab whose storage b does not share.
    const readBefore = read.length;
    const tab = new BroadcastChannel(`rewardbus:${relay.url}`);
    tab.postMessage({ type: 'linked', player: alice });
    tab.close();
    // b looks at who its storage holds before it takes up a link (before, it took alice at once).
    await expect.poll(() => read.slice(readBefore).includes('player')).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(b.player?.gamertag).toBe('bob');
  });
});
