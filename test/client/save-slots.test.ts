import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { idbStorage, memoryStorage } from '../../src/client/node.js';
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
});
