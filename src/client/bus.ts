import type { CatalogEntry, PlayerSession, RampSession, RampSessionRequest, RewardRecord, WithdrawalRequestView } from '../wire/relay-api.js';
import type { Courier } from './courier.js';
import type { RampResult, RewardBusEvents, RewardIntent, UnlockOptions } from './events.js';
import { GuardedEmitter } from './guarded-emitter.js';
import { INTENT, newIntent } from './new-intent.js';
import type { RewardBusOptions } from './options.js';
import { defaultStorage } from './storage.js';
import { createWriteBatch, type WriteBatch } from './write-batch.js';

export type { RewardBusOptions };

/**
 * The game's side of rewardbus: `unlock()` turns an achievement into a reward intent with its
 * own idempotency key, keeps it in durable storage, and sends it until the relay answers for good.
 *
 * What a game loads up front is this and unlock(). The rest (the stored queue and player, the
 * relay client, the outcomes, the event stream) is the courier, a chunk of its own that the bus
 * loads as it starts, while it reads its storage: the game's first frame never waits for it.
 */
export class RewardBus extends GuardedEmitter<RewardBusEvents> {
  /** Resolved once the stored player, queue and catalog are loaded. */
  readonly ready: Promise<void>;
  readonly #writes: WriteBatch;
  readonly #courierLoaded: Promise<Courier | undefined>;
  #courier: Courier | undefined;
  /** Intents unlocked before the courier came: stored at once, handed to it when it comes. */
  #early: RewardIntent[] | undefined = [];
  #destroyed = false;

  constructor(options: RewardBusOptions) {
    super();
    const storage = options.storage ?? defaultStorage();
    const writes = (this.#writes = createWriteBatch(storage, (err) => this.#error(err)));
    this.#courierLoaded = import('./courier.js').then(({ Courier }) => {
      if (this.#destroyed) return undefined;
      const courier = (this.#courier = new Courier(this, options, storage, writes, this.#early!));
      this.#early = undefined;
      return courier;
    });
    this.ready = this.#courierLoaded.then((c) => c?.ready);
    this.ready.then(() => this.flush(), (err: unknown) => this.#error(err));
  }

  /** The linked player, if any. */
  get player(): PlayerSession | undefined {
    return this.#courier?.player;
  }

  /** False after a request found the relay out of reach (or the browser went offline), until one gets through. */
  get online(): boolean {
    return this.#courier?.online ?? true;
  }

  /**
   * Links the player by gamertag; remembered across reloads. Resolves once the catalog and the
   * player's history are known, so an unlock() right after it applies the repeat rules.
   * Rejects with a RewardBusError.
   */
  async link(gamertag: string): Promise<PlayerSession> {
    return (await this.#started()).link(gamertag);
  }

  /**
   * Unlocks an achievement: synchronous and cheap, for the game loop. Returns the intent's id,
   * or undefined when the player cannot earn it now (then `reward:skipped` says why).
   * `details`: the game's own data, handed back in events. `options.proof`: for an achievement
   * with `proof: 'server'`, the unlock proof the game's server signed; kept with the intent and
   * sent with every attempt: `unlock('boss', undefined, { proof })`.
   */
  unlock(achievementId: string, details?: RewardIntent['details'], options?: UnlockOptions): string | undefined {
    if (this.#courier) return this.#courier.unlock(achievementId, details, options);
    if (!this.#early) return undefined;
    // Nothing is loaded yet (no catalog, no player), as in the moment before the bus's storage
    // is read: the intent is kept, as it is, and checked and sent once the courier has it.
    const intent = newIntent(achievementId, details, options, Date.now());
    this.#early.push(intent);
    this.#writes.set(INTENT + intent.id, intent);
    this.emit('reward:queued', { intent, offline: false });
    return intent.id;
  }

  /** The relay's catalog (the last one seen, when the relay is out of reach). */
  async catalog(): Promise<CatalogEntry[]> {
    return (await this.#started()).catalog();
  }

  /** Intents not yet answered for good, oldest first. */
  pending(): RewardIntent[] {
    return this.#courier?.pending() ?? [...(this.#early ?? [])];
  }

  /** The linked player's rewards, newest first (the last ones seen, when the relay is out of reach). */
  async history(): Promise<RewardRecord[]> {
    return (await this.#started()).history();
  }

  /**
   * Sends every due intent now; resolves when nothing more can be done until a retry is due.
   * While the relay seems out of reach, it first tries the oldest intent to see if it is back.
   */
  async flush(): Promise<void> {
    await (await this.#courierLoaded)?.flush();
  }

  /**
   * A ramp (buy sats) session for the linked player: reused while it lives and no purchase has
   * ended in it. openRamp() shows its widget; other engines can load `widgetUrl` themselves.
   */
  async rampSession(request: RampSessionRequest): Promise<RampSession> {
    return (await this.#started()).rampSession(request);
  }

  /**
   * The ramp widget ended (openRamp() says so; an engine that shows `widgetUrl` itself does too):
   * `ramp:success`, `ramp:error` or `ramp:close`. A purchase that ended, either way, ends the
   * session, so the next one opens anew; a widget closed without one leaves it for reuse.
   */
  rampEnded(result: RampResult): void {
    this.#courier?.rampEnded(result);
  }

  /** A withdrawal request through the relay: amount, status, expiry and its `lightning:` URI. */
  async withdrawal(id: string): Promise<WithdrawalRequestView> {
    return (await this.#started()).withdrawal(id);
  }

  /** Stops sending and listening. Queued intents stay stored for the next bus. */
  destroy(): void {
    this.#destroyed = true;
    this.#courier?.destroy();
    this.#early = undefined;
    this.removeAllListeners();
  }

  /** The courier, once loaded; a destroyed bus has none. */
  async #started(): Promise<Courier> {
    const courier = await this.#courierLoaded;
    if (!courier) throw new Error('rewardbus: the bus was destroyed');
    return courier;
  }

  #error(err: unknown) {
    this.emit('error', err instanceof Error ? err : new Error(String(err)));
  }
}

export function createRewardBus(options: RewardBusOptions): RewardBus {
  return new RewardBus(options);
}
