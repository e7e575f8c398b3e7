import * as Phaser from 'phaser';
import { RewardBusError } from 'rewardbus';

/** Title: the player enters a gamertag; linking it earns the daily login reward. */
export class TitleScene extends Phaser.Scene {
  constructor() {
    super('title');
  }

  create() {
    const { width } = this.scale;
    this.add.text(width / 2, 170, 'COIN RUSH', { fontSize: '64px', fontStyle: 'bold', color: '#f7931a' }).setOrigin(0.5);
    this.add.text(width / 2, 240, 'Grab coins, earn real sats (sandbox sats here).', { fontSize: '20px', color: '#c9d2e6' }).setOrigin(0.5);

    const form = document.getElementById('login') as HTMLFormElement;
    const input = document.getElementById('gamertag') as HTMLInputElement;
    const error = document.getElementById('login-error')!;
    input.value = this.rewards.player?.gamertag ?? '';
    form.style.display = 'flex';
    input.focus();

    const submit = async (event: SubmitEvent) => {
      event.preventDefault();
      error.textContent = '';
      try {
        await this.rewards.link(input.value.trim());
        this.rewards.unlock('daily-login');
        this.scene.start('play');
      } catch (err) {
        const code = err instanceof RewardBusError ? err.code : 'error';
        error.textContent = code === 'unknown_gamertag' ? 'No player has that gamertag.' : code === 'relay_unreachable' ? 'The reward server is out of reach.' : `Could not link: ${code}`;
      }
    };
    form.addEventListener('submit', submit);
    this.events.once(Phaser.Scenes.Events.SHUTDOWN, () => {
      form.removeEventListener('submit', submit);
      form.style.display = 'none';
    });
  }
}
