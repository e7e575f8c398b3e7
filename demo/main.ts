import * as Phaser from 'phaser';
import { RewardBusPlugin } from 'rewardbus/phaser';
import { showPanel } from './panel.js';
import { PlayScene } from './scenes/play-scene.js';
import { ResultsScene } from './scenes/results-scene.js';
import { TitleScene } from './scenes/title-scene.js';

const game = new Phaser.Game({
  type: Phaser.AUTO,
  parent: 'game',
  backgroundColor: '#161b26',
  // 800×600, scaled down to fit a narrow window (a phone) without sideways scrolling.
  scale: { mode: Phaser.Scale.FIT, autoCenter: Phaser.Scale.CENTER_HORIZONTALLY, width: 800, height: 600 },
  scene: [TitleScene, PlayScene, ResultsScene],
  plugins: {
    // The three lines of a rewardbus integration: this one, link(gamertag), and unlock(id).
    // showBalance: a balance badge with a Withdraw button, when the relay credits rewards (npm start -- --payout balance).
    global: [{ key: 'rewards', plugin: RewardBusPlugin, start: true, mapping: 'rewards', data: { relayUrl: location.origin, showBalance: true } }],
  },
});

showPanel(game.plugins.get('rewards') as RewardBusPlugin);
// For the end-to-end tests and the curious.
Object.assign(window, { game });
