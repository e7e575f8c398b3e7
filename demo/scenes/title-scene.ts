import * as Phaser from 'phaser';
import { RewardBusError } from 'rewardbus';
import { ORANGE, text } from '../style.js';

/** Title: the player enters a gamertag; linking it earns the daily login reward. */
export class TitleScene extends Phaser.Scene {
  constructor() {
    super('title');
  }

  create() {
    const { width } = this.scale;
    this.add.text(width / 2, 170, 'COIN RUSH', text(64, ORANGE, { fontStyle: 'bold' })).setOrigin(0.5);
    this.add.text(width / 2, 240, 'Grab coins, earn real sats (sandbox sats here).', text(20, '#c9d2e6')).setOrigin(0.5);

    const form = document.getElementById('login') as HTMLFormElement;
    const input = document.getElementById('gamertag') as HTMLInputElement;
    const error = document.getElementById('login-error')!;
    form.style.display = 'flex';
    input.focus();
    // The player this device played as last time, once the bus has read its storage.
    void this.rewards.bus.ready.then(() => {
      if (!input.value) input.value = this.rewards.player?.gamertag ?? '';
    });
    // Balance mode: a gamertag is optional; without one the player earns as a guest and claims the sats later.
    let balance = false;
    void this.rewards.catalog().then(
      () => {
        balance = this.rewards.bus.payoutMode === 'balance';
        input.required = !balance;
        if (balance) input.placeholder = 'gamertag (optional)';
      },
      () => undefined,
    );

    const submit = async (event: SubmitEvent) => {
      event.preventDefault();
      error.textContent = '';
      const gamertag = input.value.trim();
      try {
        // A referral link (`?ref=CODE`) counts on the player's first link with the relay.
        const referralCode = new URLSearchParams(location.search).get('ref') ?? undefined;
        if (gamertag || !balance) await this.rewards.link(gamertag, referralCode ? { referralCode } : undefined);
        // A login streak: day 1 pays 10 sats, each next UTC day more (the relay decides the day).
        this.rewards.unlock('login');
        this.scene.start('play');
      } catch (err) {
        const code = err instanceof RewardBusError ? err.code : 'error';
        error.textContent =
          code === 'unknown_gamertag' ? 'No player has that gamertag.' : code === 'relay_unreachable' ? 'The reward server is out of reach.' : `Could not link: ${code}`;
      }
    };
    form.addEventListener('submit', submit);
    this.events.once(Phaser.Scenes.Events.SHUTDOWN, () => {
      form.removeEventListener('submit', submit);
      form.style.display = 'none';
    });
  }
}
