import type {
  BalanceView,
  CatalogEntry,
  PayoutMode,
  PlayerSession,
  RampSession,
  RampSessionRequest,
  RewardRecord,
  TournamentCatalogEntry,
  WithdrawalRequestView,
  WithdrawalView,
} from '../wire/relay-api.js';
import { RewardBusError } from './bus-error.js';
import type { Courier } from './courier.js';
import type { LinkOptions, RampResult, RewardBusEvents, RewardIntent, UnlockOptions } from './events.js';
import { GuardedEmitter } from './guarded-emitter.js';
import { INTENT, newIntent } from './intent/index.js';
import type { RewardBusOptions } from './options.js';
import { checkRelayUrl } from './relay-url.js';
import { createWriteBatch, defaultStorage, type RewardStorage, type WriteBatch } from './storage/index.js';
import { createTabChannel, type TabChannel, type TabMessage, tabsName } from './tabs/index.js';

export type { RewardBusOptions };

/** After a failed load of the courier's chunk, the next try waits this long, doubling to a minute. */
const COURIER_RETRY_MS = 1_000;

/**
 * The game's side of rewardbus: `unlock()` turns an achievement into a reward intent with its
 * own idempotency key, keeps it in durable storage, and sends it until the relay answers for good.
 *
 * What a game loads up front is this class: the emitter and unlock(). The rest (the stored queue
 * and player, the relay client, the outcomes, the event stream) is the courier (courier.ts), a
 * chunk of its own that the bus loads as it starts; it then reads the storage. The game's first
 * frame never waits for it. Until it has come, as in the moment before any storage is read:
 * unlock() stores the intent at once, without the catalog's rules (the relay applies them);
 * pending() lists those intents; `player` is undefined and `online` true; the other methods
 * wait for it. Should its chunk fail to load (offline, from a cache without it), the bus tries
 * again, and its async methods reject with `relay_unreachable` meanwhile.
 */
export class RewardBus extends GuardedEmitter<RewardBusEvents> {
  /** Resolved once the courier and the stored player, queue and catalog are loaded. */
  readonly ready: Promise<void>;
  readonly #options: RewardBusOptions;
  readonly #storage: RewardStorage;
  readonly #writes: WriteBatch;
  readonly #tabs: TabChannel;
  #courier: Courier | undefined;
  /** The courier's chunk on its way; undefined once it came, or after a failure until the next try. */
  #loading: Promise<Courier> | undefined;
  #retryMs = COURIER_RETRY_MS;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Intents unlocked before the courier came: stored at once, handed to it when it comes. */
  #unlockedEarly: RewardIntent[] = [];
  /** What other tabs said before the courier came, for it to hear. */
  #heardEarly: TabMessage[] = [];
  #destroyed = false;
  readonly #retryNow = () => {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    void this.#arrival().catch(() => undefined);
  };

  constructor(options: RewardBusOptions) {
    super();
    checkRelayUrl(options.relayUrl);
    this.#options = options;
    this.#storage = options.storage ?? defaultStorage();
    this.#writes = createWriteBatch(this.#storage, (err) => this.#error(err));
    this.#tabs = createTabChannel(tabsName(options.relayUrl, this.#storage), (m) => (this.#courier ? this.#courier.heard(m) : this.#heardEarly.push(m)));
    this.ready = this.#arrival().then((c) => c.ready);
    // Reported where it fails: a courier that did not come (#arrival), its storage (#start).
    this.ready.catch(() => undefined);
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
   * The relay's payout mode, once its catalog is known (stored on this device or fetched):
   * `balance` when rewards are credited to a balance the player withdraws from.
   */
  get payoutMode(): PayoutMode | undefined {
    return this.#courier?.payoutMode;
  }

  /**
   * Links the player by gamertag; remembered across reloads. Resolves once the catalog and the
   * player's history are known, so an unlock() right after it applies the repeat rules.
   * Balance mode: optional before earning (the first unlock makes a guest); a guest that links
   * merges its credits into the player's balance (the session's `merge`, and `player:merged`).
   * `options.referralCode`: another player's code (e.g. from `?ref=` in the game's URL); it counts
   * on the player's first link with the relay only, and the session's `referral` says whether it
   * may pay (`pending`) or why not. Rejects with a RewardBusError.
   */
  async link(gamertag: string, options?: LinkOptions): Promise<PlayerSession> {
    return (await this.#arrival()).link(gamertag, options);
  }

  /**
   * The linked player's own referral code, the same every time: share it (a link to the game with
   * `?ref=CODE`); a new player who links with it earns both a reward once they have played.
   * Rejects with a RewardBusError (no player linked, or the relay runs no referral program: 404).
   */
  async referralCode(): Promise<string> {
    return (await this.#arrival()).referralCode();
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
    const intent = newIntent(achievementId, details, options, Date.now());
    this.#unlockedEarly.push(intent);
    this.#writes.set(INTENT + intent.id, intent);
    this.emit('reward:queued', { intent, offline: false });
    return intent.id;
  }

  /** The relay's catalog (the last one seen, when the relay is out of reach). */
  async catalog(): Promise<CatalogEntry[]> {
    return (await this.#arrival()).catalog();
  }

  /** The relay's tournaments (issue 37): a prize's record names one by its id; its title is here. */
  async tournaments(): Promise<TournamentCatalogEntry[]> {
    return (await this.#arrival()).tournaments();
  }

  /** Intents not yet answered for good, oldest first. */
  pending(): RewardIntent[] {
    return this.#courier?.pending() ?? [...this.#unlockedEarly];
  }

  /** The linked player's rewards, newest first (the last ones seen, when the relay is out of reach). */
  async history(): Promise<RewardRecord[]> {
    return (await this.#arrival()).history();
  }

  /**
   * Sends every due intent now; resolves when nothing more can be done until a retry is due.
   * While the relay seems out of reach, it first tries the oldest intent to see if it is back.
   */
  async flush(): Promise<void> {
    const courier = await this.#arrival().catch(() => undefined);
    await courier?.flush();
  }

  /**
   * A ramp (buy sats) session for the linked player: reused while it lives and no purchase has
   * ended in it. openRamp() shows its widget; other engines can load `widgetUrl` themselves.
   */
  async rampSession(request: RampSessionRequest): Promise<RampSession> {
    return (await this.#arrival()).rampSession(request);
  }

  /**
   * The ramp widget ended (openRamp() says so; an engine that shows `widgetUrl` itself does too):
   * `ramp:success`, `ramp:error` or `ramp:close`. A purchase that ended, either way, ends the
   * session, so the next one opens anew; a widget closed without one leaves it for reuse.
   */
  rampEnded(result: RampResult): void {
    this.#courier?.rampEnded(result);
    if (result.type === 'success') this.emit('ramp:success', result.data);
    else if (result.type === 'error') this.emit('ramp:error', result.error);
    else this.emit('ramp:close');
  }

  /**
   * Balance mode: the player's (or guest's) balance and what of it may be withdrawn now. Also
   * said as `balance:changed`, after every credit and withdrawal. Rejects with a RewardBusError.
   */
  async balance(): Promise<BalanceView> {
    return (await this.#arrival()).balance();
  }

  /**
   * Balance mode: withdraws `sats` (default: all that is withdrawable now) to the linked player's
   * gamertag, in one payment. One idempotency key per call, sent again under it while the relay
   * is out of reach or busy, so it is paid at most once. Resolves with the withdrawal (`paid`,
   * `failed`, `held` or `needs_review`; said as `withdrawal:*` too); rejects with a RewardBusError:
   * `below_minimum`, `insufficient_balance`, `over_limit`, `gamertag_required` (a guest), ….
   */
  async withdraw(sats?: number): Promise<WithdrawalView> {
    return (await this.#arrival()).withdraw(sats);
  }

  /** A withdrawal request through the relay: amount, status, expiry and its `lightning:` URI. */
  async withdrawal(id: string): Promise<WithdrawalRequestView> {
    return (await this.#arrival()).withdrawal(id);
  }

  /**
   * Stops sending and listening: the listeners hear nothing more. Queued intents stay stored for
   * the next bus. A claim already on its way is not aborted: its answer is taken as always, and
   * its outcome said by the newest live bus on the same relay and storage in this page or
   * process (or the next one made), as its own.
   */
  destroy(): void {
    this.#destroyed = true;
    this.#stopRetrying();
    this.#courier?.destroy();
    this.#tabs.close();
    this.removeAllListeners();
  }

  /** The courier: here, on its way, or asked for again after a failure. */
  #arrival(): Promise<Courier> {
    if (this.#courier) return Promise.resolve(this.#courier);
    if (this.#destroyed) return Promise.reject(new RewardBusError('destroyed', 'The bus was destroyed'));
    this.#loading ??= import('./courier.js').then(
      ({ Courier }) => this.#start(Courier),
      (err: unknown) => {
        this.#loading = undefined;
        this.#retryLater();
        const failed = new RewardBusError('relay_unreachable', `rewardbus could not load its courier: ${err instanceof Error ? err.message : String(err)}`);
        this.#error(failed);
        throw failed;
      },
    );
    return this.#loading;
  }

  #start(CourierClass: typeof Courier): Courier {
    if (this.#destroyed) throw new RewardBusError('destroyed', 'The bus was destroyed');
    const courier = new CourierClass(
      this.#options,
      { bus: this, storage: this.#storage, writes: this.#writes, tabs: this.#tabs, error: (err) => this.#error(err) },
      this.#unlockedEarly,
    );
    this.#courier = courier;
    this.#loading = undefined;
    this.#stopRetrying();
    this.#unlockedEarly = [];
    for (const m of this.#heardEarly.splice(0)) courier.heard(m);
    courier.ready.then(
      () => courier.flush(),
      (err: unknown) => this.#error(err),
    );
    return courier;
  }

  /** Tries the courier's chunk again: when the browser is back online, or after a backoff (a call tries at once). */
  #retryLater() {
    if (this.#destroyed || this.#retryTimer !== undefined) return;
    if (typeof window !== 'undefined') window.addEventListener('online', this.#retryNow, { once: true });
    this.#retryTimer = setTimeout(this.#retryNow, this.#retryMs);
    (this.#retryTimer as { unref?: () => void }).unref?.();
    this.#retryMs = Math.min(this.#retryMs * 2, 60_000);
  }

  #stopRetrying() {
    clearTimeout(this.#retryTimer);
    if (typeof window !== 'undefined') window.removeEventListener('online', this.#retryNow);
  }

  #error(err: unknown) {
    this.emit('error', err instanceof Error ? err : new Error(String(err)));
  }
}

export function createRewardBus(options: RewardBusOptions): RewardBus {
  return new RewardBus(options);
}
