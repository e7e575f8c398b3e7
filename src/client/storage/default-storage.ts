import { idbStorage } from './idb-storage.js';
import { memoryStorage, type RewardStorage } from './storage.js';

/**
 * IndexedDB where there is one (browsers). Elsewhere memory, said once: the package's Node
 * entry defaults to a file instead, and other runtimes should pass a storage of their own.
 */
export function defaultStorage(): RewardStorage {
  if (typeof indexedDB !== 'undefined') return idbStorage();
  console.warn('rewardbus: no IndexedDB here, so queued rewards are kept in memory only; pass a storage to keep them');
  return memoryStorage();
}
