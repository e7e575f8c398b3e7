// A game as a developer writes it from Phaser's templates: the plugin in the game config,
// link(gamertag), unlock(id). The gamertag comes from the page's query (?gamertag=…).
import * as Phaser from 'phaser';
import { RewardBusPlugin } from 'rewardbus/phaser';

declare module 'phaser' {
  interface Scene {
    rewards: RewardBusPlugin;
  }
}

class Boot extends Phaser.Scene {
  constructor() {
    super('boot');
  }

  create() {
    const status = this.add.text(20, 20, 'linking…', { color: '#ffffff' });
    const gamertag = new URLSearchParams(location.search).get('gamertag') ?? 'player';
    this.rewards.link(gamertag).then(
      () => {
        status.setText(`playing as ${gamertag}`);
        this.rewards.unlock('first-coin');
      },
      (err: Error) => status.setText(`could not link: ${err.message}`),
    );
  }
}

const game = new Phaser.Game({
  type: Phaser.AUTO,
  width: 640,
  height: 360,
  parent: 'game-container',
  scene: [Boot],
  plugins: { global: [{ key: 'rewards', plugin: RewardBusPlugin, start: true, mapping: 'rewards', data: { relayUrl: location.origin } }] },
});
Object.assign(window, { game });
