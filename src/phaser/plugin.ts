import * as Phaser from 'phaser';
import { createRewardBus, openRamp, type RewardBus, type RewardBusEvents, type RewardBusOptions, showWithdrawal } from '../client/index.js';
import type { CatalogEntry, RampSessionRequest } from '../wire/relay-api.js';
import type { SayToast, ToastEvent, ToastPayload } from './toast-events.js';
import { TOAST_SCENE_KEY, type Toast, type ToastOptions, ToastScene } from './toast-scene.js';
import { TOAST_EVENTS } from './toast-types.js';

/** The balance badge's scene key (balance-badge.ts, loaded only with `showBalance`). */
export const BALANCE_SCENE_KEY = '__rewardbus_balance';

/** The plugin's `data` in the game config. */
export interface RewardBusPluginData extends RewardBusOptions {
  /** Toast look and place, or false for none. */
  toasts?: ToastOptions | false;
  /** Balance mode: a badge with the player's balance and a Withdraw button (withdraws all that is withdrawable), at the bottom right. */
  showBalance?: boolean;
}

/**
 * The bus's methods a scene calls on `this.rewards`: the bus's own (their signatures and docs are
 * the bus's), called on the plugin's bus of the moment, not written again here.
 */
const BUS_METHODS = ['link', 'unlock', 'catalog', 'pending', 'history', 'flush', 'balance', 'withdraw'] as const satisfies ReadonlyArray<keyof RewardBus>;

// The class below has these from the bus (defined on its prototype after it); this tells the compiler.
export interface RewardBusPlugin extends Pick<RewardBus, (typeof BUS_METHODS)[number]> {}

/**
 * A Phaser global plugin: register it with `mapping: 'rewards'` and every scene has
 * `this.rewards`, with the bus's link(), unlock(), catalog(), pending(), history(), flush(),
 * balance() and withdraw(), the bus itself as `this.rewards.bus`, and payout toasts drawn above
 * all scenes (and, with `showBalance: true`, a balance badge with a Withdraw button).
 *
 * ```ts
 * plugins: { global: [{ key: 'rewards', plugin: RewardBusPlugin, start: true, mapping: 'rewards', data: { relayUrl } }] }
 * ```
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: each method of the interface is defined on the prototype, from BUS_METHODS, below.
export class RewardBusPlugin extends Phaser.Plugins.BasePlugin {
  #data: RewardBusPluginData | undefined;
  #bus: RewardBus | undefined;
  #titles = new Map<string, CatalogEntry>();
  #prizes = new Map<string, string>();
  #unsubscribe: Array<() => void> = [];
  #toastsOn = false;
  #showUsd = false;
  #toasts: Promise<SayToast> | undefined;
  #badge = false;

  override init(data?: RewardBusPluginData) {
    if (!data?.relayUrl) throw new Error('RewardBusPlugin needs data: { relayUrl }');
    this.#data = data;
  }

  override start() {
    const data = this.#data!;
    const bus = (this.#bus = createRewardBus(data));
    void bus.catalog().then(
      (c) => c.forEach((e) => this.#titles.set(e.id, e)),
      () => undefined,
    );
    // A prize's toast names its tournament ("🏆 2nd place · Weekly cup · +5,000 sats").
    void bus.tournaments().then(
      (ts) => ts.forEach((t) => this.#prizes.set(t.id, t.title)),
      () => undefined,
    );
    if (data.toasts !== false) this.#startToasts(data.toasts ?? {}, bus);
    if (data.showBalance) this.#startBadge(bus);
  }

  override stop() {
    this.#unsubscribe.splice(0).forEach((off) => off());
    // game.destroy() destroys the scenes and their manager before the plugins: then there is
    // nothing to remove, and removing from it throws (leaving the bus running and the canvas up).
    const scenes = this.game.scene?.game ? this.game.scene : undefined;
    if (this.#toastsOn) scenes?.remove(TOAST_SCENE_KEY);
    this.#toastsOn = false;
    if (this.#badge) scenes?.remove(BALANCE_SCENE_KEY);
    this.#badge = false;
    this.#bus?.destroy();
    this.#bus = undefined;
  }

  override destroy() {
    this.stop();
    super.destroy();
  }

  /** The bus itself: its events, `ready`, `online`. */
  get bus(): RewardBus {
    if (!this.#bus) throw new Error('RewardBusPlugin is not started');
    return this.#bus;
  }

  /** The linked player, if any (undefined too while the plugin is stopped). */
  get player() {
    return this.#bus?.player;
  }

  /** Shows the buy-sats widget above the game; resolves with how it ended. */
  openRamp(request: RampSessionRequest) {
    return openRamp(this.bus, request);
  }
  /** Shows a withdrawal request as a QR code to claim with a wallet; resolves with a close function. */
  showWithdrawal(id: string) {
    return showWithdrawal(this.bus, id);
  }
  /** Listens on the bus; returns a function that stops listening (call it in your scene's shutdown). */
  on<E extends keyof RewardBusEvents>(event: E, fn: RewardBusEvents[E]): () => void {
    this.bus.on(event, fn as never);
    return () => this.#bus?.off(event, fn as never);
  }
  /** Where toasts may appear (game coordinates): keep what the player must click out of it. */
  toastArea(): Phaser.Geom.Rectangle | undefined {
    const scene = this.#toastScene();
    return this.#toastsOn && scene?.sys.isActive() ? scene.area() : undefined;
  }

  /** Shows a toast of your own through the same stack. */
  toast(toast: Toast) {
    // Before the game has booted the scene is still pending: then there is nowhere to draw yet.
    const scene = this.#toastScene();
    if (scene?.sys.isActive()) scene.show(toast);
  }

  /** None once the game is destroyed: Phaser then nulls `game`, and a credit's toast may still come (it waits for its balance). */
  #toastScene() {
    return this.game?.scene.getScene(TOAST_SCENE_KEY) as ToastScene | null | undefined;
  }

  /** The badge's scene comes in a chunk of its own: a game without it does not pay for it. */
  #startBadge(bus: RewardBus) {
    this.#badge = true;
    void import('./balance-badge.js').then(({ BalanceBadgeScene }) => {
      if (this.#bus === bus) this.#addScene(BALANCE_SCENE_KEY, BalanceBadgeScene, { bus, toast: (t: Toast) => this.toast(t) }, bus);
    });
  }

  /**
   * Adds one of the plugin's scenes: queued by the scene manager when the game has not booted yet,
   * started as soon as it has. Stopped and started again in one frame (from a scene), the old one's
   * removal waits for the scene manager's next update: so does this, else Phaser throws on the
   * duplicate key in the game loop, which stops.
   */
  #addScene(key: string, scene: Phaser.Types.Scenes.SceneType, data: object, bus: RewardBus) {
    if (!this.game.scene.getScene(key)) this.game.scene.add(key, scene, true, data);
    else this.game.events.once(Phaser.Core.Events.POST_STEP, () => this.#bus === bus && this.#addScene(key, scene, data, bus));
  }

  #startToasts(options: ToastOptions, bus: RewardBus) {
    this.#addScene(TOAST_SCENE_KEY, ToastScene, options, bus);
    this.#toastsOn = true;
    this.#showUsd = options.showUsd === true;
    // The tab that got the answer shows it; the others only hear of it. An unlock says
    // something only when it has to wait for the network.
    for (const event of TOAST_EVENTS) {
      this.#listen(event, ((e?: { remote?: boolean; offline?: boolean }) => {
        if (!e?.remote && e?.offline !== false) this.#say(event, e as never);
      }) as never);
    }
  }

  /** What the toasts say is loaded with the first one; toasts keep the order of their events. */
  #say<E extends ToastEvent>(event: E, e: ToastPayload<E>) {
    this.#toasts ??= import('./toast-events.js').then((m) =>
      m.toastEvents({
        entry: (id) => this.#titles.get(id),
        tournament: (id) => this.#prizes.get(id),
        gamertag: () => this.#bus?.player?.gamertag ?? '',
        pending: () => this.#bus?.pending() ?? [],
        toast: (t) => this.toast(t),
        showUsd: this.#showUsd,
      }),
    );
    void this.#toasts.then((say) => say(event, e));
  }

  #listen<E extends keyof RewardBusEvents>(event: E, fn: RewardBusEvents[E]) {
    this.#unsubscribe.push(this.on(event, fn));
  }
}

// link(), unlock(), catalog(), pending(), history(), flush(), balance() and withdraw(): the bus's, on the bus of the moment
// (`bus` throws while the plugin is stopped). Three arguments, the most a bus method takes, rather
// than a rest parameter: unlock() is called in the game loop, and a rest parameter makes an array.
for (const name of BUS_METHODS) {
  Object.defineProperty(RewardBusPlugin.prototype, name, {
    value: function fromBus(this: RewardBusPlugin, a?: never, b?: never, c?: never) {
      return (this.bus[name] as (a?: never, b?: never, c?: never) => unknown)(a, b, c);
    },
    writable: true,
    configurable: true,
  });
}
