// What the player may earn now: the relay's catalog as this device knows it, and the repeat rules.
export { CatalogCache } from './catalog-cache.js';
export { earnBlock, LastEarned, lastEarned } from './earn-rules.js';
