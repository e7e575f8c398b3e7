import { delMany, entries, get, promisifyRequest, setMany, type UseStore } from 'idb-keyval';
import type { RewardStorage } from './storage.js';

/** IndexedDB through idb-keyval: loaded on first use, by idbStorage() (idb-storage.ts). */
export function idbKeyvalStorage(dbName = 'rewardbus', storeName = 'queue'): RewardStorage {
  const s = reopeningStore(dbName, storeName);
  return {
    get: (key) => get(key, s),
    setMany: (list) => setMany(list, s),
    delMany: (keys) => delMany(keys, s),
    entries: async <T>(prefix: string) => (await entries<IDBValidKey, T>(s)).filter((e): e is [string, T] => typeof e[0] === 'string' && e[0].startsWith(prefix)),
    // One transaction, committed as soon as its requests are made: left to commit on its own, it
    // would wait for their answers to come back to this page first, a turn of its event loop later.
    write: (sets, dels) =>
      s('readwrite', (os) => {
        for (const [k, v] of sets) os.put(v, k);
        for (const k of dels) os.delete(k);
        os.transaction.commit?.();
        return promisifyRequest(os.transaction);
      }),
  };
}

/**
 * idb-keyval's createStore, but its connection is let go when the database is to be deleted or
 * upgraded (a game's "reset progress", another tab) or the browser closes it (site data cleared),
 * and opened again at the next use. createStore keeps its first connection for the page's life:
 * a deleteDatabase() then stays blocked, and after a clearing every write fails until a reload.
 * Opened on first use, so merely importing the client opens no database.
 */
function reopeningStore(dbName: string, storeName: string): UseStore {
  let db: Promise<IDBDatabase> | undefined;
  const open = () => {
    const request = indexedDB.open(dbName);
    request.onupgradeneeded = () => request.result.createObjectStore(storeName);
    const opening: Promise<IDBDatabase> = promisifyRequest(request).then((conn) => {
      const forget = () => {
        if (db === opening) db = undefined;
      };
      conn.onversionchange = () => {
        conn.close(); // after the transactions under way: what they write is kept
        forget();
      };
      conn.onclose = forget;
      return conn;
    });
    // A failed open is tried again at the next use; this use gets its error.
    opening.catch(() => {
      if (db === opening) db = undefined;
    });
    return opening;
  };
  return (txMode, callback) => (db ??= open()).then((conn) => callback(conn.transaction(storeName, txMode).objectStore(storeName)));
}
