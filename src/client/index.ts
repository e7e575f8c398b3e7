export type * from '../wire/relay-api.js';
export { createRewardBus, RewardBus, type RewardBusOptions } from './bus.js';
export { RewardBusError } from './bus-error.js';
export type { RetryOptions } from './delivery/index.js';
export type { LinkOptions, RampResult, RewardBusEvents, RewardIntent, RewardOutcome, RewardWaiting, UnlockOptions, WithdrawalOutcome } from './events.js';
export { openRamp, showWithdrawal } from './overlays/index.js';
export { defaultStorage, idbStorage, memoryStorage, type RewardStorage } from './storage/index.js';
