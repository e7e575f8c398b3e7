import type { RewardStorage } from './storage.js';

/**
 * IndexedDB, shared by every tab of the game's origin. idb-keyval is loaded when the store is first
 * used (as the bus starts), a chunk of its own: not in the bytes a game loads up front. One store
 * per database and store name in a page, as fileStorage() is per path: its buses know it for the
 * same queue (a destroyed bus's claims are said by a live bus on it: outcomes/handover.ts).
 */
export function idbStorage(dbName = 'rewardbus', storeName = 'queue'): RewardStorage {
  // A character no name has between them: 'a/b' + 'c' is not 'a' + 'b/c'.
  const name = `${dbName}\0${storeName}`;
  let storage = opened.get(name);
  // The default keeps the tabs' name it had (none), so a tab of an earlier version still takes turns with this one.
  const tabs = name === 'rewardbus\0queue' ? undefined : `idb ${name}`;
  if (!storage) opened.set(name, (storage = lazy(() => import('./idb-keyval-storage.js').then((m) => m.idbKeyvalStorage(dbName, storeName)), tabs)));
  return storage;
}

/** The stores of this page, by database and store name. */
const opened = new Map<string, RewardStorage>();

/** A storage made on first use (its module is loaded only then; tried again at the next use if that failed). */
function lazy(make: () => Promise<RewardStorage>, name: string | undefined): RewardStorage {
  let s: Promise<RewardStorage> | undefined;
  const get = () =>
    (s ??= make().catch((err: unknown) => {
      s = undefined;
      throw err;
    }));
  return {
    ...(name === undefined ? {} : { name }),
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
