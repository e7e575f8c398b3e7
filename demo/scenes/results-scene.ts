import * as Phaser from 'phaser';

/** Results: how the round went and what it paid; play again or go back to the title. */
export class ResultsScene extends Phaser.Scene {
  constructor() {
    super('results');
  }

  create(data: { collected: number; won: boolean }) {
    const { width } = this.scale;
    this.add.text(width / 2, 160, data.won ? 'LEVEL COMPLETE' : "TIME'S UP", { fontSize: '52px', fontStyle: 'bold', color: '#f7931a' }).setOrigin(0.5);
    this.add.text(width / 2, 230, `${data.collected} coins collected`, { fontSize: '24px', color: '#e8ecf4' }).setOrigin(0.5);
    const paid = this.add.text(width / 2, 280, '', { fontSize: '20px', color: '#6fdc9a' }).setOrigin(0.5);
    void this.rewards.history().then((h) => {
      const sats = h.filter((r) => r.status === 'paid').reduce((s, r) => s + r.sats, 0);
      if (paid.active) paid.setText(`${sats} sats earned so far`);
    });
    this.#button(width / 2, 380, 'Play again', () => this.scene.start('play'));
    this.#button(width / 2, 450, 'Change player', () => this.scene.start('title'));
  }

  #button(x: number, y: number, label: string, onClick: () => void) {
    const text = this.add.text(x, y, label, { fontSize: '24px', color: '#111', backgroundColor: '#f7931a', padding: { x: 18, y: 10 } });
    text.setOrigin(0.5).setInteractive({ useHandCursor: true }).on('pointerdown', onClick);
  }
}
