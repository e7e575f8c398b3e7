import * as Phaser from 'phaser';
import { MUTED, text } from '../style.js';

const GOAL = 20;
const STREAK = 10;
const SECONDS = 45;

/** Play: click coins before they vanish. Achievements: first coin, ten in a row, level complete. */
export class PlayScene extends Phaser.Scene {
  #collected = 0;
  #streak = 0;
  #left = SECONDS;
  #hud!: Phaser.GameObjects.Text;

  constructor() {
    super('play');
  }

  create() {
    this.#collected = 0;
    this.#streak = 0;
    this.#left = SECONDS;
    this.#hud = this.add.text(16, 16, '', text(22));
    this.add.text(16, 570, 'Click the coins. Ten in a row pays a streak bonus.', text(16, MUTED));
    this.#updateHud();
    this.time.addEvent({ delay: 1000, loop: true, callback: () => (--this.#left <= 0 ? this.#end() : this.#updateHud()) });
    // The first coin waits in the middle, so every player gets the first reward.
    this.#spawn(this.scale.width / 2, this.scale.height / 2, false);
  }

  #spawn(x: number, y: number, vanishes = true) {
    const coin = this.add.circle(x, y, 26, 0xf7931a).setStrokeStyle(4, 0xffc46b).setInteractive({ useHandCursor: true });
    const label = this.add.text(x, y, 'B', text(28, '#1b1b1b', { fontStyle: 'bold' })).setOrigin(0.5);
    const gone = () => {
      coin.destroy();
      label.destroy();
    };
    const timer = vanishes
      ? this.time.delayedCall(1400, () => {
          gone();
          this.#streak = 0;
          this.#next();
        })
      : undefined;
    coin.once('pointerdown', () => {
      timer?.remove();
      gone();
      this.#collect();
    });
  }

  #collect() {
    this.#collected++;
    this.#streak++;
    if (this.#collected === 1) this.rewards.unlock('first-coin');
    if (this.#streak === STREAK) {
      this.rewards.unlock('coin-streak');
      this.#streak = 0;
    }
    this.#updateHud();
    if (this.#collected >= GOAL) {
      this.rewards.unlock('level-complete');
      this.#end();
    } else this.#next();
  }

  #next() {
    if (!this.scene.isActive()) return;
    // Never under the toasts, where a click could not reach the coin.
    const toasts = this.rewards.toastArea();
    let x: number, y: number;
    do {
      x = Phaser.Math.Between(60, this.scale.width - 60);
      y = Phaser.Math.Between(90, this.scale.height - 90);
    } while (toasts && Phaser.Geom.Rectangle.Inflate(Phaser.Geom.Rectangle.Clone(toasts), 30, 30).contains(x, y));
    this.#spawn(x, y);
  }

  #updateHud() {
    this.#hud.setText(`Coins ${this.#collected}/${GOAL}   Streak ${this.#streak}   Time ${this.#left}s`);
  }

  #end() {
    this.scene.start('results', { collected: this.#collected, won: this.#collected >= GOAL });
  }
}
