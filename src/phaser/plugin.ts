import * as Phaser from 'phaser';
import { createRewardBus, openRamp, type RewardBus, type RewardBusEvents, type RewardBusOptions, showWithdrawal, type UnlockOptions } from '../client/index.js';
import type { CatalogEntry, RampSessionRequest } from '../wire/relay-api.js';
import type { SayToast, ToastEvent, ToastPayload } from './toast-events.js';
import { TOAST_SCENE_KEY, type Toast, type ToastOptions, ToastScene } from './toast-scene.js';
import { TOAST_EVENTS } from './toast-types.js';

/** The plugin's `data` in the game config. */
export interface RewardBusPluginData extends RewardBusOptions {
  /** Toast look and place, or false for none. */
  toasts?: ToastOptions | false;
}

/**
 * A Phaser global plugin: register it with `mapping: 'rewards'` and every scene has
 * `this.rewards`, the reward bus, with payout toasts drawn above all scenes.
 *
 * ```ts
 * plugins: { global: [{ key: 'rewards', plugin: RewardBusPlugin, start: true, mapping: 'rewards', data: { relayUrl } }] }
 * ```
 */
export class RewardBusPlugin extends Phaser.Plugins.BasePlugin {
  #data: RewardBusPluginData | undefined;
  #bus: RewardBus | undefined;
  #titles = new Map<string, CatalogEntry>();
  #unsubscribe: Array<() => void> = [];
  #toastsOn = false;
  #toasts: Promise<SayToast> | undefined;

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
    if (data.toasts !== false) this.#startToasts(data.toasts ?? {});
  }

  override stop() {
    this.#unsubscribe.splice(0).forEach((off) => off());
    if (this.#toastsOn) this.game.scene?.remove(TOAST_SCENE_KEY);
    this.#toastsOn = false;
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

  get player() {
    return this.#bus?.player;
  }

  link(gamertag: string) {
    return this.bus.link(gamertag);
  }
  /** Returns the intent id, or undefined when the player cannot earn it now. `options.proof`: the game server's unlock proof. */
  unlock(achievementId: string, details?: Parameters<RewardBus['unlock']>[1], options?: UnlockOptions) {
    return this.bus.unlock(achievementId, details, options);
  }
  catalog() {
    return this.bus.catalog();
  }
  pending() {
    return this.bus.pending();
  }
  history() {
    return this.bus.history();
  }
  flush() {
    return this.bus.flush();
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
    const scene = this.game.scene.getScene(TOAST_SCENE_KEY) as ToastScene | null;
    return this.#toastsOn && scene?.sys.isActive() ? scene.area() : undefined;
  }

  /** Shows a toast of your own through the same stack. */
  toast(toast: Toast) {
    // Before the game has booted the scene is still pending: then there is nowhere to draw yet.
    const scene = this.game.scene.getScene(TOAST_SCENE_KEY) as ToastScene | null;
    if (scene?.sys.isActive()) scene.show(toast);
  }

  #startToasts(options: ToastOptions) {
    // Queued by the scene manager when the game has not booted yet; started as soon as it has.
    this.game.scene.add(TOAST_SCENE_KEY, ToastScene, true, options);
    this.#toastsOn = true;
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
        gamertag: () => this.#bus?.player?.gamertag ?? '',
        pending: () => this.#bus?.pending() ?? [],
        toast: (t) => this.toast(t),
      }),
    );
    void this.#toasts.then((say) => say(event, e));
  }

  #listen<E extends keyof RewardBusEvents>(event: E, fn: RewardBusEvents[E]) {
    this.#unsubscribe.push(this.on(event, fn));
  }
}
