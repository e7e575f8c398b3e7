import * as Phaser from 'phaser';
import type { Toast, ToastOptions, ToastStack } from './toast-types.js';

export type { Toast, ToastOptions, ToastVariant } from './toast-types.js';

const MARGIN = 12;
const GAP = 8;
const MAX_WIDTH = 320;
/** A one-line toast's height at the default font size, for the area toasts may cover. */
const LINE_HEIGHT = 42;

export const TOAST_SCENE_KEY = '__rewardbus_toasts';
/** The plugin's balance badge (`showBalance`), the one scene allowed above the toasts. */
const BALANCE_SCENE = '__rewardbus_balance';

/** A scene kept above every other, where the payout toasts stack. */
export class ToastScene extends Phaser.Scene {
  readonly #stack: ToastStack = {
    options: {},
    live: [],
    margin: MARGIN,
    gap: GAP,
    width: () => Math.min(MAX_WIDTH, this.scale.width - 2 * MARGIN),
    x: (width) => {
      const pos = this.#stack.options.position ?? 'top-right';
      return pos.endsWith('left') ? MARGIN : pos === 'top-center' ? (this.scale.width - width) / 2 : this.scale.width - width - MARGIN;
    },
  };
  #drawing: Promise<typeof import('./toast-drawing.js')> | undefined;

  constructor() {
    super({ key: TOAST_SCENE_KEY, active: true });
  }

  init(options: ToastOptions) {
    this.#stack.options = options ?? {};
  }

  create() {
    // A resized game (Scale.RESIZE, a phone turned): the toasts move to its new corner.
    const relayout = () => void this.#drawing?.then((d) => this.sys.isActive() && d.layout(this, this.#stack));
    this.scale.on(Phaser.Scale.Events.RESIZE, relayout);
    // The scale manager outlives this scene, which the plugin removes (a destroy with no shutdown).
    const off = () => this.scale.off(Phaser.Scale.Events.RESIZE, relayout);
    this.events.once(Phaser.Scenes.Events.SHUTDOWN, off);
    this.events.once(Phaser.Scenes.Events.DESTROY, off);
  }

  /** The last 50 toasts shown, oldest first: for tests, and games that keep a log. */
  readonly recent: Toast[] = [];

  /** How many toasts are showing (for tests and games that want to know). */
  get showing(): number {
    return this.#stack.live.length;
  }

  /**
   * Where toasts may appear, in game coordinates: a game keeps what the player must click out
   * of it (two-line toasts, at most `max` of them).
   */
  area(): Phaser.Geom.Rectangle {
    const o = this.#stack.options;
    const width = this.#stack.width();
    const height = (o.max ?? 4) * (2 * LINE_HEIGHT + GAP);
    const y = (o.position ?? 'top-right').startsWith('bottom') ? this.scale.height - MARGIN - height : MARGIN;
    return new Phaser.Geom.Rectangle(this.#stack.x(width), y, width, height);
  }

  override update() {
    // Scenes started after this one render above it: stay on top.
    const scenes = this.game.scene.getScenes(true);
    // The plugin's balance badge may be above this one; a game's scene may not.
    if (scenes.slice(scenes.indexOf(this) + 1).some((s) => s.sys.settings.key !== BALANCE_SCENE)) this.scene.bringToTop();
  }

  /** Shows a toast; its drawing is loaded with the first one, and toasts keep their order. */
  show(toast: Toast) {
    this.recent.push(toast);
    if (this.recent.length > 50) this.recent.shift();
    this.#drawing ??= import('./toast-drawing.js');
    void this.#drawing.then((d) => this.sys.isActive() && d.drawToast(this, this.#stack, toast));
  }
}
