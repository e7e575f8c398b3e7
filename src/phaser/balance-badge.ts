import * as Phaser from 'phaser';
import type { RewardBus } from '../client/index.js';
import type { BalanceView } from '../wire/relay-api.js';
import { refusalText } from './toast-text.js';
import type { Toast } from './toast-types.js';

/** The scenes the plugin keeps above the game's (toasts, this badge): each lets the other be above it. */
const OVERLAY_SCENE_KEYS = ['__rewardbus_toasts', '__rewardbus_balance'];

export interface BalanceBadgeData {
  bus: RewardBus;
  toast(toast: Toast): void;
}

const MARGIN = 12;

/**
 * The player's balance (balance mode) in a badge at the bottom right, with a Withdraw button that
 * withdraws all that is withdrawable. Shown once the bus has said a balance (`balance:changed`);
 * the button works for a linked player with at least the minimum withdrawable. Loaded only when
 * the plugin's data says `showBalance: true`.
 */
export class BalanceBadgeScene extends Phaser.Scene {
  #bus!: RewardBus;
  #toast!: (toast: Toast) => void;
  #label!: Phaser.GameObjects.Text;
  /** The Withdraw button: for tests, and games that place their own. */
  button!: Phaser.GameObjects.Text;
  #bg!: Phaser.GameObjects.Graphics;
  #balance: BalanceView | undefined;
  #withdrawing = false;
  readonly #onBalance = (b: BalanceView) => {
    this.#balance = b;
    this.#render();
  };
  readonly #onPlayer = () => this.#render();

  constructor() {
    super({ key: '__rewardbus_balance', active: true });
  }

  init(data: BalanceBadgeData) {
    this.#bus = data.bus;
    this.#toast = data.toast;
  }

  create() {
    this.#bg = this.add.graphics();
    this.#label = this.add.text(0, 0, '', { fontFamily: 'system-ui, sans-serif', fontSize: '18px', color: '#ffffff' });
    this.button = this.add
      .text(0, 0, 'Withdraw', { fontFamily: 'system-ui, sans-serif', fontSize: '16px', color: '#111111', backgroundColor: '#f7931a', padding: { x: 10, y: 5 } })
      .setInteractive({ useHandCursor: true })
      .on('pointerdown', () => void this.withdraw());
    this.#bus.on('balance:changed', this.#onBalance);
    this.#bus.on('player:linked', this.#onPlayer);
    // A resized game (Scale.RESIZE, a phone turned): the badge moves to its new corner.
    this.scale.on(Phaser.Scale.Events.RESIZE, this.#render, this);
    // The bus and the scale manager outlive this scene, which the plugin removes (a destroy with no shutdown).
    const off = () => {
      this.#bus.off('balance:changed', this.#onBalance);
      this.#bus.off('player:linked', this.#onPlayer);
      this.scale.off(Phaser.Scale.Events.RESIZE, this.#render, this);
    };
    this.events.once(Phaser.Scenes.Events.SHUTDOWN, off);
    this.events.once(Phaser.Scenes.Events.DESTROY, off);
    this.#render();
  }

  /** What the badge says: "52 sats", or nothing before a balance is known. */
  get text(): string {
    return this.#label?.text ?? '';
  }

  /** The Withdraw button's action: all that is withdrawable now; a refusal is said as a toast. */
  async withdraw() {
    if (!this.#can() || this.#withdrawing) return;
    this.#withdrawing = true;
    this.#render();
    try {
      await this.#bus.withdraw();
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'error';
      this.#toast({ variant: 'rejected', text: refusalText(code), sats: 0, gamertag: this.#bus.player?.gamertag ?? '', reason: code });
    } finally {
      this.#withdrawing = false;
      this.#render();
    }
  }

  override update() {
    // Above the game's scenes (the toasts may be above this).
    const scenes = this.game.scene.getScenes(true);
    if (scenes.slice(scenes.indexOf(this) + 1).some((s) => !OVERLAY_SCENE_KEYS.includes(s.sys.settings.key))) this.scene.bringToTop();
  }

  #can(): boolean {
    const b = this.#balance;
    const player = this.#bus.player;
    return !!b && !!player && !player.guest && b.withdrawableSats >= b.minWithdrawalSats;
  }

  #render() {
    if (!this.#label) return;
    const b = this.#balance;
    this.#label.setText(b ? `${b.sats.toLocaleString()} sats` : '');
    const shown = !!b;
    this.#label.setVisible(shown);
    this.button.setVisible(shown);
    this.#bg.clear();
    if (!shown) return;
    // Bottom right: the toasts stack at the top, and a game's HUD is often at the top left.
    const width = 12 + this.#label.width + 12 + this.button.width + 8;
    const height = Math.max(this.#label.height, this.button.height) + 12;
    const x = this.scale.width - MARGIN - width;
    const y = this.scale.height - MARGIN - height;
    this.#label.setPosition(x + 12, y + (height - this.#label.height) / 2);
    this.button.setPosition(x + 12 + this.#label.width + 12, y + (height - this.button.height) / 2);
    this.button.setAlpha(this.#can() && !this.#withdrawing ? 1 : 0.45);
    this.#bg.fillStyle(0x1b2130, 0.92);
    this.#bg.fillRoundedRect(x, y, width, height, 10);
  }
}
