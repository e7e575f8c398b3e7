/**
 * Where the bus keeps its queue and player: a small async key-value store. The defaults are
 * IndexedDB in browsers (idb-keyval) and a JSON file in Node; `memoryStorage()` forgets on reload.
 * Writes must be applied in the order they are called: an intent's deletion can be asked for while
 * the write that stores it is still under way.
 */
export interface RewardStorage {
  get<T>(key: string): Promise<T | undefined>;
  /** Writes all of them, in one transaction where the store has them. */
  setMany(entries: Array<[string, unknown]>): Promise<void>;
  delMany(keys: string[]): Promise<void>;
  /** Optional: writes `sets` and deletes `dels` in one transaction (the write batch uses it where a store has it). */
  write?(sets: Array<[string, unknown]>, dels: string[]): Promise<void>;
  /** Every entry whose key starts with `prefix`. */
  entries<T>(prefix: string): Promise<Array<[string, T]>>;
  /**
   * Optional: which queue this is, among the game's on one relay (a save slot's, a second
   * player's). The tabs whose storages share a name, or have none, take turns sending and hear
   * each other's links and outcomes; with none, every storage on the relay is the same queue.
   */
  readonly name?: string;
}

/** A storage that forgets on reload: for tests, and games that keep nothing. */
export function memoryStorage(): RewardStorage {
  const map = new Map<string, unknown>();
  // Its own queue, which no other tab shares: no other tab's links or outcomes are its.
  return { ...mapStorage(async () => map), name: `memory ${Math.random().toString(36).slice(2)}` };
}

/**
 * A storage kept in a Map: `load` gives the map (once), `save` persists it after each write.
 * Values are copied in and out, as IndexedDB's structured clone does: nobody shares an object
 * with the store. Writes run one after another, each saved once.
 */
export function mapStorage(load: () => Promise<Map<string, unknown>>, save?: (map: Map<string, unknown>) => Promise<void>): RewardStorage {
  let map: Promise<Map<string, unknown>> | undefined;
  let writing: Promise<void> = Promise.resolve();
  const loaded = () => (map ??= load());
  const copy = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
  const write = (change: (m: Map<string, unknown>) => void) => {
    const done = writing.then(async () => {
      const m = await loaded();
      change(m);
      await save?.(m);
    });
    // A failed save fails its own write only: the next one runs, and saves the map with its change.
    writing = done.catch(() => undefined);
    return done;
  };
  return {
    get: async (key) => copy((await loaded()).get(key)) as never,
    setMany: (list) => write((m) => list.forEach(([k, v]) => m.set(k, copy(v)))),
    delMany: (keys) => write((m) => keys.forEach((k) => m.delete(k))),
    // A turn's sets and deletions in one change, saved once (fileStorage: one file written, not two).
    write: (sets, dels) =>
      write((m) => {
        for (const [k, v] of sets) m.set(k, copy(v));
        for (const k of dels) m.delete(k);
      }),
    entries: async (prefix) => [...(await loaded())].filter(([k]) => k.startsWith(prefix)).map(([k, v]) => [k, copy(v)] as [string, never]),
  };
}
