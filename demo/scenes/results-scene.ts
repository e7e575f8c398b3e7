import * as Phaser from 'phaser';
import type { RewardRecord } from 'rewardbus';
import { MUTED, ORANGE, ORANGE_HOVER, text } from '../style.js';

/** Results: how the round went and what the player has been paid; play again or go back to the title. */
export class ResultsScene extends Phaser.Scene {
  constructor() {
    super('results');
  }

  create(data: { collected: number; won: boolean }) {
    const { width } = this.scale;
    this.add.text(width / 2, 160, data.won ? 'LEVEL COMPLETE' : "TIME'S UP", text(52, ORANGE, { fontStyle: 'bold' })).setOrigin(0.5);
    this.add.text(width / 2, 230, `${data.collected} coins collected`, text(24)).setOrigin(0.5);
    const paid = this.add.text(width / 2, 280, '', text(20, '#6fdc9a')).setOrigin(0.5);
    const playTime = this.add.text(width / 2, 314, '', text(17, MUTED)).setOrigin(0.5);
    // The round's last rewards may still be on their way: the total follows each payout.
    const show = (history: readonly RewardRecord[]) => {
      // Balance mode credits rewards (withdrawals are in the history too, and are no reward).
      const sats = history.filter((r) => !r.kind && (r.status === 'paid' || r.status === 'credited')).reduce((s, r) => s + r.sats, 0);
      const waiting = this.rewards.pending().length;
      const verb = this.rewards.bus.payoutMode === 'balance' ? 'earned' : 'paid';
      if (paid.active) paid.setText(`${sats.toLocaleString()} sats ${verb} so far${waiting ? ` · ${waiting} more on the way` : ''}`);
    };
    // The history once; then each outcome's record in its place (no request to the relay per reward).
    let history: RewardRecord[] = [];
    void this.rewards.history().then((h) => show((history = [...h, ...history.filter((r) => !h.some((x) => x.id === r.id))])));
    const heard = ({ record }: { record?: RewardRecord }) => {
      if (record) history = [record, ...history.filter((r) => r.id !== record.id)];
      show(history);
    };
    // A reward the relay pays only after some play (witnessed play): say how long it still waits.
    const catalog = new Map<string, { title: string; minPlaySeconds?: number }>();
    void this.rewards.catalog().then(
      (c) => c.forEach((e) => catalog.set(e.id, e)),
      () => undefined,
    );
    const showPlayTime = () => {
      const now = Date.now();
      const lines = this.rewards
        .pending()
        .filter((i) => (i.notBefore ?? 0) > now)
        .map((i) => {
          const e = catalog.get(i.achievementId);
          const needed = e?.minPlaySeconds ? ` (${e.minPlaySeconds} s of play needed)` : '';
          return `${e?.title ?? i.achievementId}: paid in ${Math.ceil((i.notBefore! - now) / 1000)} s${needed}`;
        });
      if (playTime.active) playTime.setText(lines.join('\n'));
    };
    this.time.addEvent({ delay: 250, loop: true, callback: showPlayTime });
    const offs = (['reward:paid', 'reward:credited', 'reward:failed', 'reward:rejected', 'reward:review', 'reward:held', 'reward:waiting'] as const).map((e) =>
      this.rewards.on(e, heard),
    );
    this.events.once(Phaser.Scenes.Events.SHUTDOWN, () => offs.forEach((off) => off()));
    this.#button(width / 2, 380, 'Play again', () => this.scene.start('play'));
    this.#button(width / 2, 450, 'Change player', () => this.scene.start('title'));
  }

  #button(x: number, y: number, label: string, onClick: () => void) {
    const button = this.add.text(x, y, label, text(24, '#111111', { backgroundColor: ORANGE, padding: { x: 18, y: 10 } }));
    button.setOrigin(0.5).setInteractive({ useHandCursor: true }).on('pointerdown', onClick);
    button.on('pointerover', () => button.setBackgroundColor(ORANGE_HOVER)).on('pointerout', () => button.setBackgroundColor(ORANGE));
  }
}
