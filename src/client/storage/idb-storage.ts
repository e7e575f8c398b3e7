import type { RewardStorage } from './storage.js';

/**
 * IndexedDB, shared by every tab of the game's origin. idb-keyval is loaded when the store is first
 * used (as the bus starts), a chunk of its own: not in the bytes a game loads up front.
 */
export function idbStorage(dbName = 'rewardbus', storeName = 'queue'): RewardStorage {
  return lazy(() => import('./idb-keyval-storage.js').then((m) => m.idbKeyvalStorage(dbName, storeName)));
}

/** A storage made on first use (its module is loaded only then). */
function lazy(make: () => Promise<RewardStorage>): RewardStorage {
  let s: Promise<RewardStorage> | undefined;
  const get = () => (s ??= make());
  return {
    get: async (key) => (await get()).get(key),
    setMany: async (list) => (await get()).setMany(list),
    delMany: async (keys) => (await get()).delMany(keys),
    entries: async (prefix) => (await get()).entries(prefix),
    write: async (sets, dels) => {
      const store = await get();
      await (store.write ? store.write(sets, dels) : Promise.all([store.setMany(sets), store.delMany(dels)]));
    },
  };
}
