import * as Phaser from 'phaser';

/** `held`: waiting for an operator's approval; `waiting`: for the player's play time. */
export type ToastVariant = 'queued' | 'paid' | 'rejected' | 'failed' | 'review' | 'held' | 'waiting' | 'info';

/** What a toast says; a custom renderer draws it its own way. */
export interface Toast {
  variant: ToastVariant;
  /** One line, ready to show: "+21 sats · First coin". */
  text: string;
  sats: number;
  gamertag: string;
  achievementId?: string;
  reason?: string;
}

export interface ToastOptions {
  position?: 'top-right' | 'top-left' | 'bottom-right' | 'bottom-left' | 'top-center';
  /** How long each toast stays, ms. Default 3500. */
  durationMs?: number;
  /** Most toasts on screen at once; older ones leave early. Default 4. */
  max?: number;
  fontFamily?: string;
  fontSize?: number;
  /** Background color per variant (0xRRGGBB). */
  colors?: Partial<Record<ToastVariant, number>>;
  /** Draw a toast yourself: return a game object about `width` wide, origin at its top-left. */
  render?: (scene: Phaser.Scene, toast: Toast, width: number) => Phaser.GameObjects.GameObject & Phaser.GameObjects.Components.Transform;
}

const COLORS: Record<ToastVariant, number> = {
  queued: 0x44506a,
  paid: 0x1f8a4c,
  rejected: 0xb26b00,
  failed: 0xa8322d,
  review: 0x7a5fb0,
  held: 0x7a5fb0,
  waiting: 0x44506a,
  info: 0x2d5fa8,
};
type ToastObject = Phaser.GameObjects.GameObject & Phaser.GameObjects.Components.Transform & { height?: number; setAlpha?: (a: number) => unknown };
const MARGIN = 12;
const GAP = 8;
const MAX_WIDTH = 320;
/** A one-line toast's height at the default font size, for the area toasts may cover. */
const LINE_HEIGHT = 42;

export const TOAST_SCENE_KEY = '__rewardbus_toasts';

/** A scene kept above every other, where the payout toasts stack. */
export class ToastScene extends Phaser.Scene {
  #options: ToastOptions = {};
  readonly #live: ToastObject[] = [];

  constructor() {
    super({ key: TOAST_SCENE_KEY, active: true });
  }

  init(options: ToastOptions) {
    this.#options = options ?? {};
  }

  /** The last 50 toasts shown, oldest first: for tests, and games that keep a log. */
  readonly recent: Toast[] = [];

  /** How many toasts are showing (for tests and games that want to know). */
  get showing(): number {
    return this.#live.length;
  }

  /**
   * Where toasts may appear, in game coordinates: a game keeps what the player must click out
   * of it (two-line toasts, at most `max` of them).
   */
  area(): Phaser.Geom.Rectangle {
    const width = this.#width();
    const height = (this.#options.max ?? 4) * (2 * LINE_HEIGHT + GAP);
    const x = this.#x(width);
    const y = (this.#options.position ?? 'top-right').startsWith('bottom') ? this.scale.height - MARGIN - height : MARGIN;
    return new Phaser.Geom.Rectangle(x, y, width, height);
  }

  override update() {
    // Scenes started after this one render above it: stay on top.
    const scenes = this.game.scene.getScenes(true);
    if (scenes[scenes.length - 1] !== this) this.scene.bringToTop();
  }

  show(toast: Toast) {
    const o = this.#options;
    this.recent.push(toast);
    if (this.recent.length > 50) this.recent.shift();
    const width = this.#width();
    const item: ToastObject = o.render ? o.render(this, toast, width) : this.#draw(toast, width);
    this.#live.push(item);
    while (this.#live.length > (o.max ?? 4)) this.#remove(this.#live[0]!);
    this.#layout(width);
    item.setAlpha?.(0);
    this.tweens.add({ targets: item, alpha: 1, duration: 150 });
    this.time.delayedCall(o.durationMs ?? 3500, () =>
      this.tweens.add({ targets: item, alpha: 0, duration: 250, onComplete: () => this.#remove(item) }),
    );
    this.scene.bringToTop();
  }

  #draw(toast: Toast, width: number) {
    const o = this.#options;
    const text = this.add.text(12, 10, toast.text, {
      fontFamily: o.fontFamily ?? 'system-ui, sans-serif',
      fontSize: `${o.fontSize ?? 16}px`,
      color: '#ffffff',
      // Advanced wrap also breaks a word longer than the box (a long gamertag).
      wordWrap: { width: width - 24, useAdvancedWrap: true },
    });
    const height = text.height + 20;
    const bg = this.add.graphics();
    bg.fillStyle(o.colors?.[toast.variant] ?? COLORS[toast.variant], 0.95);
    bg.fillRoundedRect(0, 0, width, height, 10);
    const box = this.add.container(0, 0, [bg, text]);
    box.setSize(width, height);
    box.setName(`toast-${toast.variant}`);
    return box;
  }

  #remove(item: ToastObject) {
    const i = this.#live.indexOf(item);
    if (i < 0) return;
    this.#live.splice(i, 1);
    item.destroy();
    this.#layout(this.#width());
  }

  #width() {
    return Math.min(MAX_WIDTH, this.scale.width - 2 * MARGIN);
  }

  #x(width: number) {
    const pos = this.#options.position ?? 'top-right';
    return pos.endsWith('left') ? MARGIN : pos === 'top-center' ? (this.scale.width - width) / 2 : this.scale.width - width - MARGIN;
  }

  #layout(width: number) {
    const bottom = (this.#options.position ?? 'top-right').startsWith('bottom');
    const x = this.#x(width);
    let y = bottom ? this.scale.height - MARGIN : MARGIN;
    // Newest nearest the edge.
    for (const item of [...this.#live].reverse()) {
      const h = item.height ?? 40;
      item.setPosition(x, bottom ? (y -= h) : y);
      y = bottom ? y - GAP : y + h + GAP;
    }
  }
}
