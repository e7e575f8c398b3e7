// The script-tag bundle: the client and the Phaser plugin under the global `RewardBus`.
export * from './client/index.js';
export * from './phaser/index.js';
