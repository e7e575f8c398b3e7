import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryStorage, type RewardStorage } from '../../src/client/node.js';
import { busesOnTestRelay, next } from '../helpers/client.js';
import { fakeLocks } from '../helpers/web-locks.js';

/**
 * IndexedDB failing on demand: `writes` as past its quota (QuotaExceededError: the transaction
 * aborts, nothing of it stored), `reads` too as Safari's after the page was suspended
 * ("Connection to Indexed Database server lost").
 */
function failingStorage() {
  const inner = memoryStorage();
  const f = { writes: false, reads: false };
  const fail = (what: string) => Promise.reject(new DOMException(`storage failed: ${what}`, 'QuotaExceededError'));
  const storage: RewardStorage = {
    get: (key) => (f.reads ? fail('get') : inner.get(key)),
    entries: (prefix) => (f.reads ? fail('entries') : inner.entries(prefix)),
    setMany: (list) => (f.writes ? fail('setMany') : inner.setMany(list)),
    delMany: (keys) => (f.writes ? fail('delMany') : inner.delMany(keys)),
    write: (sets, dels) => (f.writes ? fail('write') : inner.write!(sets, dels)),
  };
  return { storage, f };
}

let current: ReturnType<typeof failingStorage> | undefined;
const { bus, start } = busesOnTestRelay(() => (current = failingStorage()).storage);
afterEach(() => vi.unstubAllGlobals());

/** Another tab asks for the lock (or this one was hidden): the next send takes it afresh, and reads the store first. */
async function lockTakenAfresh(relayUrl: string) {
  const otherTab = new BroadcastChannel(`rewardbus:${relayUrl}`);
  otherTab.postMessage({ type: 'lock' });
  otherTab.close();
  await new Promise((r) => setTimeout(r, 50));
}

/** Alice linked on a bus whose tab has just taken the lock afresh (so its next send reads the store first), with its errors. */
async function aliceWithLockTakenAfresh() {
  vi.stubGlobal('navigator', { locks: fakeLocks().locks });
  const relay = await start();
  const b = bus();
  const { f } = current!;
  await b.link('alice');
  const errors: Error[] = [];
  b.on('error', (e) => errors.push(e));
  await lockTakenAfresh(relay.url);
  return { relay, b, f, errors };
}

describe('IndexedDB that fails while the game plays', () => {
  it('past its quota: an unlock that could not be stored is not taken for another tab’s, but sent and paid once', async () => {
    const { relay, b, f, errors } = await aliceWithLockTakenAfresh();
    f.writes = true;
    const paid = next(b, 'reward:paid');
    const id = b.unlock('first-coin');
    // Before, the read that follows taking the lock found no such intent stored and, its write
    // no longer pending, took it for one another tab had finished: dropped, never sent, never said.
    expect((await paid).intent.id).toBe(id);
    expect(relay.sandbox!.payments()).toHaveLength(1);
    expect(errors.some((e) => e instanceof DOMException && e.name === 'QuotaExceededError')).toBe(true);
  });

  it('that stopped answering (Safari’s, in a tab resumed): an unlock is sent from memory and paid once', async () => {
    const { relay, b, f, errors } = await aliceWithLockTakenAfresh();
    f.writes = f.reads = true;
    const paid = next(b, 'reward:paid');
    const id = b.unlock('first-coin');
    // Before, that read failed, and the whole send with it: nothing went while the store was gone.
    expect((await paid).intent.id).toBe(id);
    expect(relay.sandbox!.payments()).toHaveLength(1);
    expect(errors.length).toBeGreaterThan(0);
  });
});
