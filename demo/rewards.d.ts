import type { RewardBusPlugin } from 'rewardbus/phaser';

// The plugin is registered with mapping: 'rewards', so every scene has this.rewards.
declare module 'phaser' {
  interface Scene {
    rewards: RewardBusPlugin;
  }
}
