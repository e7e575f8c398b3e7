/**
 * Where the bus keeps its queue and player: a small async key-value store. The defaults are
 * IndexedDB in browsers (idb-keyval) and a JSON file in Node; `memoryStorage()` forgets on reload.
 */
export interface RewardStorage {
  get<T>(key: string): Promise<T | undefined>;
  /** Writes all of them, in one transaction where the store has them. */
  setMany(entries: Array<[string, unknown]>): Promise<void>;
  delMany(keys: string[]): Promise<void>;
  /** Every entry whose key starts with `prefix`. */
  entries<T>(prefix: string): Promise<Array<[string, T]>>;
}

export function memoryStorage(): RewardStorage {
  const map = new Map<string, unknown>();
  // Copies, as IndexedDB's structured clone makes: nobody shares an object with the store.
  const copy = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
  return {
    get: async (key) => copy(map.get(key)) as never,
    setMany: async (entries) => void entries.forEach(([k, v]) => map.set(k, copy(v))),
    delMany: async (keys) => void keys.forEach((k) => map.delete(k)),
    entries: async (prefix) => [...map].filter(([k]) => k.startsWith(prefix)).map(([k, v]) => [k, copy(v)] as [string, never]),
  };
}

/** IndexedDB where there is one (browsers), else a JSON file (Node). */
export function defaultStorage(): RewardStorage {
  if (typeof indexedDB !== 'undefined') return lazy(() => import('./idb-storage.js').then((m) => m.idbStorage()));
  return lazy(() => import('./file-storage.js').then((m) => m.fileStorage()));
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
  };
}
