import type { RewardStorage } from './storage.js';

/**
 * Writes made in one turn go to storage as one transaction; `undefined` deletes; a key written
 * twice in a turn is stored once, as last written. unlock() only queues here, so the game loop
 * never waits on IndexedDB or the disk.
 */
export function createWriteBatch(storage: RewardStorage, onError: (err: unknown) => void) {
  // Two arrays, not a Map or pairs: unlock() appends one key and one value, and growing a large
  // Map, or making a pair per write, costs it more.
  let keys: string[] = [];
  let values: unknown[] = [];
  let written: Promise<void> = Promise.resolve();
  /** Keys whose last write failed (past the quota, a full disk): the store may not hold what this tab does. */
  const failed = new Set<string>();
  const store = () => {
    const last = new Map<string, unknown>();
    for (let i = 0; i < keys.length; i++) last.set(keys[i]!, values[i]);
    keys = [];
    values = [];
    const sets: Array<[string, unknown]> = [];
    const dels: string[] = [];
    for (const [k, v] of last) v === undefined ? dels.push(k) : sets.push([k, v]);
    // In one transaction where the store can (IndexedDB): one commit, not two in a row.
    const stored = storage.write ? storage.write(sets, dels) : Promise.all([sets.length && storage.setMany(sets), dels.length && storage.delMany(dels)]);
    return stored.then(
      () => {
        for (const k of last.keys()) failed.delete(k);
      },
      (err: unknown) => {
        for (const k of last.keys()) failed.add(k);
        onError(err);
      },
    );
  };
  const batch = {
    /** Queues one key's value (undefined: delete) for this turn's transaction. */
    set(key: string, value: unknown) {
      if (!keys.length) written = Promise.resolve().then(store);
      keys.push(key);
      values.push(value);
    },
    write(entries: Array<[string, unknown]>) {
      for (const [k, v] of entries) batch.set(k, v);
    },
    /** Resolves when everything written so far is stored. */
    get written() {
      return written;
    },
    /**
     * True while a write of `key` waits for its turn, or when its last write failed: what the
     * store holds for it (perhaps nothing) is not what this tab wrote, nor another tab's doing.
     */
    pending: (key: string) => keys.includes(key) || failed.has(key),
  };
  return batch;
}

export type WriteBatch = ReturnType<typeof createWriteBatch>;
