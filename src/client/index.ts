export type * from '../wire/relay-api.js';
export type { RetryOptions } from './backoff.js';
export { createRewardBus, RewardBus, type RewardBusOptions } from './bus.js';
export { RewardBusError } from './bus-error.js';
export { defaultStorage } from './default-storage.js';
export type { RampResult, RewardBusEvents, RewardIntent, RewardOutcome, UnlockOptions } from './events.js';
export { idbStorage } from './idb-storage.js';
export { openRamp, showWithdrawal } from './overlays.js';
export { memoryStorage, type RewardStorage } from './storage.js';
