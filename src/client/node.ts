// The client in Node (the package's `node` export condition): the same bus, its queue kept in a
// file by default. Browser bundles resolve the other entry and never see node:fs.
import { RewardBus as BaseRewardBus, type RewardBusOptions } from './bus.js';
import { fileStorage } from './file-storage.js';

export * from './index.js';
export { fileStorage };

/** The reward bus, with its queue in `.rewardbus/client-queue.json` unless `storage` says otherwise. */
export class RewardBus extends BaseRewardBus {
  constructor(options: RewardBusOptions) {
    super({ ...options, storage: options.storage ?? fileStorage() });
  }
}

export function createRewardBus(options: RewardBusOptions): RewardBus {
  return new RewardBus(options);
}
