// Where the bus keeps its queue, player and history: the store's interface, the browser's and
// memory's stores, and the write batch every write goes through. Node's file store is
// ../file-storage.ts, which only the Node entry reaches.
export { defaultStorage } from './default-storage.js';
export { idbStorage } from './idb-storage.js';
export { mapStorage, memoryStorage, type RewardStorage } from './storage.js';
export { createWriteBatch, type WriteBatch } from './write-batch.js';
