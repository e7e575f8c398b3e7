import type { RewardStorage } from './storage.js';

/**
 * Writes made in one turn go to storage as one transaction; `undefined` deletes. unlock() only
 * queues here, so the game loop never waits on IndexedDB or the disk.
 */
export function createWriteBatch(storage: RewardStorage, onError: (err: unknown) => void) {
  let pending: Array<[string, unknown]> = [];
  let written: Promise<void> = Promise.resolve();
  return {
    write(entries: Array<[string, unknown]>) {
      if (!pending.length) {
        written = Promise.resolve().then(() => {
          const batch = new Map(pending);
          pending = [];
          const sets = [...batch].filter(([, v]) => v !== undefined);
          const dels = [...batch].filter(([, v]) => v === undefined).map(([k]) => k);
          return Promise.all([sets.length && storage.setMany(sets), dels.length && storage.delMany(dels)]).then(() => undefined, onError);
        });
      }
      pending.push(...entries);
    },
    /** Resolves when everything written so far is stored. */
    get written() {
      return written;
    },
    /** True while a write of `key` waits for its turn. */
    pending: (key: string) => pending.some(([k]) => k === key),
  };
}

export type WriteBatch = ReturnType<typeof createWriteBatch>;
