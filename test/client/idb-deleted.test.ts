import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { idbStorage } from '../../src/client/node.js';
import { busesOnTestRelay, controlledFetch, everyCoin, next } from '../helpers/client.js';

let dbCount = 0;
const { bus, start } = busesOnTestRelay(() => idbStorage(`rewardbus-deleted-${++dbCount}`));

/** The database deleted as a game's "reset progress" does: 'blocked' while a connection stays open. */
const deleteDatabase = (name: string) =>
  new Promise<string>((resolve) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve('deleted');
    request.onblocked = () => resolve('blocked');
    request.onerror = () => resolve('failed');
  });

describe('the IndexedDB queue, its database deleted while the game runs', () => {
  it('lets the deletion through, and keeps the next unlock in a new database until it is paid', async () => {
    const relay = await start({}, everyCoin);
    const name = `rewardbus-deleted-${++dbCount}`;
    const storage = idbStorage(name);
    const net = controlledFetch();
    const b = bus({ storage, fetch: net.fetch });
    await b.link('alice');
    const paid = next(b, 'reward:paid');
    b.unlock('coin');
    await paid;

    expect(await deleteDatabase(name)).toBe('deleted');

    // The next unlock, offline: kept on the device, in a database opened anew...
    net.offline = true;
    const offline = next(b, 'relay:offline');
    const id = b.unlock('coin');
    await offline;
    await b.flush();
    expect((await storage.entries('intent:')).map(([, intent]) => (intent as { id: string }).id)).toEqual([id]);
    b.destroy();

    // ...so that the game loaded again keeps it until the player links again (their session went
    // with the old database), and pays it from there.
    net.offline = false;
    const reloaded = bus({ storage: idbStorage(name), fetch: net.fetch });
    const said: string[] = [];
    for (const e of ['reward:rejected', 'reward:failed', 'reward:paid'] as const) reloaded.on(e, (o) => said.push(`${e} ${o.reason ?? ''}`));
    await reloaded.ready;
    await reloaded.flush();
    // Before, with no session for the intent's player, the bus said it rejected (player_unknown) and deleted it.
    expect(said).toEqual([]);
    expect(reloaded.pending().map((i) => i.id)).toEqual([id]);
    const again = next(reloaded, 'reward:paid');
    await reloaded.link('alice');
    expect(await again).toMatchObject({ intent: { id }, record: { status: 'paid' } });
    await expect.poll(() => storage.entries('intent:')).toEqual([]);
    expect(relay.sandbox!.payments()).toHaveLength(2);
  });
});
