import { createStore, delMany, entries, get, promisifyRequest, setMany } from 'idb-keyval';
import type { RewardStorage } from './storage.js';

/** IndexedDB through idb-keyval: loaded on first use, by idbStorage() (idb-storage.ts). */
export function idbKeyvalStorage(dbName = 'rewardbus', storeName = 'queue'): RewardStorage {
  let store: ReturnType<typeof createStore> | undefined;
  // Made on first use, so merely importing the client opens no database.
  const s = () => (store ??= createStore(dbName, storeName));
  return {
    get: (key) => get(key, s()),
    setMany: (list) => setMany(list, s()),
    delMany: (keys) => delMany(keys, s()),
    entries: async <T>(prefix: string) => (await entries<IDBValidKey, T>(s())).filter((e): e is [string, T] => typeof e[0] === 'string' && e[0].startsWith(prefix)),
    // One transaction, committed as soon as its requests are made: left to commit on its own, it
    // would wait for their answers to come back to this page first, a turn of its event loop later.
    write: (sets, dels) =>
      s()('readwrite', (os) => {
        for (const [k, v] of sets) os.put(v, k);
        for (const k of dels) os.delete(k);
        os.transaction.commit?.();
        return promisifyRequest(os.transaction);
      }),
  };
}
