import { idbStorage } from './idb-storage.js';

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

/** A storage that forgets on reload: for tests, and games that keep nothing. */
export function memoryStorage(): RewardStorage {
  const map = new Map<string, unknown>();
  return mapStorage(async () => map);
}

/**
 * A storage kept in a Map: `load` gives the map (once), `save` persists it after each write.
 * Values are copied in and out, as IndexedDB's structured clone does: nobody shares an object
 * with the store. Writes run one after another.
 */
export function mapStorage(load: () => Promise<Map<string, unknown>>, save?: (map: Map<string, unknown>) => Promise<void>): RewardStorage {
  let map: Promise<Map<string, unknown>> | undefined;
  let writing: Promise<void> = Promise.resolve();
  // Each value is also kept as the JSON it was written as: read out, it is parsed once, not
  // written out and parsed again (a drain reads every queued intent on each pass).
  const json = new Map<string, string>();
  const loaded = () => (map ??= load());
  const out = (m: Map<string, unknown>, k: string): never => {
    const v = m.get(k);
    if (v === undefined) return v as never;
    let s = json.get(k);
    if (s === undefined) json.set(k, (s = JSON.stringify(v)));
    return JSON.parse(s) as never;
  };
  const write = (change: (m: Map<string, unknown>) => void) =>
    (writing = writing.then(async () => {
      const m = await loaded();
      change(m);
      await save?.(m);
    }));
  return {
    get: async (key) => out(await loaded(), key),
    setMany: (list) =>
      write((m) => {
        for (const [k, v] of list) {
          const s = JSON.stringify(v);
          json.set(k, s);
          m.set(k, JSON.parse(s));
        }
      }),
    delMany: (keys) =>
      write((m) => {
        for (const k of keys) {
          m.delete(k);
          json.delete(k);
        }
      }),
    entries: async (prefix) => {
      const m = await loaded();
      return [...m.keys()].filter((k) => k.startsWith(prefix)).map((k) => [k, out(m, k)]);
    },
  };
}

/**
 * IndexedDB where there is one (browsers). Elsewhere memory, said once: the package's Node
 * entry defaults to a file instead, and other runtimes should pass a storage of their own.
 */
export function defaultStorage(): RewardStorage {
  if (typeof indexedDB !== 'undefined') return idbStorage();
  console.warn('rewardbus: no IndexedDB here, so queued rewards are kept in memory only; pass a storage to keep them');
  return memoryStorage();
}
