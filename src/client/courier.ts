import type { EventEmitter } from 'eventemitter3';
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
import { BalanceMode } from './balance-mode.js';
import { answer } from './bus-error.js';
import { createRelayClient, PlayerStream, type RelayClient } from './delivery/index.js';
import type { LinkOptions, RampResult, RewardBusEvents, RewardIntent, RewardOutcome, UnlockOptions } from './events.js';
import { type HearingParts, heardFromTab, heardRecord } from './hearing.js';
import { randomId } from './intent/index.js';
import type { RewardBusOptions } from './options.js';
import { type HandoverPage, handOver, handoverPage, leave, Outcomes, takeHandovers, takeLeft } from './outcomes/index.js';
import { PlayerAccount } from './player-account.js';
import { PlayerSessions } from './players/index.js';
import { IntentQueue } from './queue/index.js';
import { CatalogCache, LastEarned, lastEarned } from './rules/index.js';
import type { RewardStorage, WriteBatch } from './storage/index.js';
import type { TabChannel, TabMessage } from './tabs/index.js';
import { type UnlockParts, unlock as unlockWith } from './unlock.js';

/** What the bus hands its courier: where events go (its guarded emitter), and what it made up front. */
export interface CourierParts {
  bus: Pick<EventEmitter<RewardBusEvents>, 'emit'>;
  storage: RewardStorage;
  writes: WriteBatch;
  /** The game's other tabs: opened by the bus, which keeps what they said until the courier came. */
  tabs: TabChannel;
  /** Reports what went wrong on the bus's `error` event. */
  error(err: unknown): void;
}

/**
 * The bus's working half, loaded on demand as the bus starts: the stored player, queue, catalog
 * and history, the relay client that sends the queue until each intent has its final answer,
 * the outcomes said once, and the player's event stream. RewardBus (bus.ts) is what a game
 * loads up front, and hands every call here once this is loaded: the methods are its, and
 * documented there.
 */
export class Courier {
  /** Resolved once the stored player, queue and catalog are loaded. */
  readonly ready: Promise<void>;
  readonly #bus: CourierParts['bus'];
  readonly #storage: RewardStorage;
  readonly #relay: RelayClient;
  readonly #writes: WriteBatch;
  readonly #tabs: TabChannel;
  readonly #sessions: PlayerSessions;
  readonly #outcomes: Outcomes;
  readonly #queue: IntentQueue;
  readonly #earned: LastEarned;
  readonly #catalog: CatalogCache;
  readonly #stream: PlayerStream;
  readonly #account: PlayerAccount;
  /** The wallet and the guest (balance mode): the wallet loaded once the catalog says the relay credits rewards. */
  readonly #balance: BalanceMode;
  /** What unlock() and what the courier hears from elsewhere need of it (unlock.ts, hearing.ts). */
  readonly #parts: UnlockParts & HearingParts;
  /** Where a destroyed bus's claims are handed over: this bus's storage and relay. */
  readonly #handovers: HandoverPage;
  /** Stops taking what destroyed buses of this page hand over. */
  readonly #stopTaking: () => void;
  #destroyed = false;
  /** The browser is back online: send what waited, or at least find out whether the relay answers. */
  readonly #onOnline = () => void this.flush().then(() => (this.#queue.online ? undefined : this.#probeRelay()));
  readonly #onOffline = () => this.#queue.setOnline(false);

  /** `unlockedEarly`: intents unlock() stored before this was loaded (not stored again: another tab may have sent them). */
  constructor(options: RewardBusOptions, { bus, storage, writes, tabs, error }: CourierParts, unlockedEarly: RewardIntent[]) {
    this.#bus = bus;
    this.#storage = storage;
    this.#writes = writes;
    this.#tabs = tabs;
    this.#relay = createRelayClient(options);
    this.#catalog = new CatalogCache(this.#relay, this.#writes);
    const sessions = (this.#sessions = new PlayerSessions(this.#storage, this.#writes, this.#relay, (e) => this.#bus.emit('player:check', e)));
    this.#account = new PlayerAccount({
      relay: this.#relay,
      sessions,
      ready: () => this.ready,
      renewed: (s) => this.#stream.renewed(s),
      destroyed: () => this.#destroyed,
    });
    this.#stream = new PlayerStream(
      this.#relay,
      {
        reward: (r) => heardRecord(this.#parts, r),
        // A purchase that ended ends its session: the next "buy" opens a new one.
        completed: (e) => {
          this.#account.forgetRamp();
          this.#bus.emit('ramp:completed', e);
        },
        failed: (e) => {
          this.#account.forgetRamp();
          this.#bus.emit('ramp:failed', e);
        },
        // Cut before it heard an event to resume after: what it missed (a hold approved, a reward
        // paid on another device) is in the history, which says what this device saw waiting.
        missed: () => {
          if (!this.#destroyed) void this.#refreshHistory();
        },
      },
      options.eventSource,
      // Its token was refused (lapsed: the relay ended its stream): link again, as a refused claim does.
      (userId) => {
        sessions.expire(userId);
        void this.#account.sessionFor(userId).catch(() => undefined);
      },
    );
    this.#earned = new LastEarned(
      (id, ahead) => lastEarned(id, sessions.current?.userId, this.#queue.list(), this.#outcomes.history, ahead),
      () => this.#relay.clock.most,
    );
    /** The game's tabs take turns under Web Locks of their channel's name (one per relay and queue). */
    const lockName = tabs.name;
    const handovers = (this.#handovers = handoverPage(storage, options.relayUrl));
    this.#queue = new IntentQueue(
      {
        storage: this.#storage,
        writes: this.#writes,
        relay: this.#relay,
        // The queue renews tokens through the bus, so the event stream follows a renewed one.
        sessions: {
          get current() {
            return sessions.current;
          },
          forUser: (userId) => this.#account.sessionFor(userId),
          expire: (userId) => sessions.expire(userId),
          waitsForLink: (userId) => sessions.waitsForLink(userId),
        },
        earned: this.#earned,
        lockName,
        tab: randomId(),
        ...(tabs.open ? { knock: () => tabs.post({ type: 'lock' }) } : {}),
        concurrency: options.concurrency ?? 6,
        retry: options.retry,
      },
      {
        sent: (intent, attempt) => this.#bus.emit('reward:sent', { intent, attempt }),
        waiting: (e) => this.#bus.emit('reward:waiting', e),
        settled: (intent, event, record, reason) => this.#outcomes.settle(this.#outcome(intent, record, reason, false), event),
        reachable: (online) => {
          // A catalog the relay could not give at start comes now (and with it, batched claims).
          if (online) void this.#catalog.refresh().then(() => (this.#sessions.current ? this.#balance.start() : this.#balance.guestIfBalance()));
          this.#bus.emit(online ? 'relay:online' : 'relay:offline');
        },
        error,
      },
    );
    this.#outcomes = new Outcomes({
      // One argument, not a rest parameter: the shipped code would copy arguments into an array.
      emit: (event, outcome) => {
        // Destroyed (its listeners are gone): what it had on its way is said by the page's next bus.
        if (this.#destroyed) return handOver(handovers, { event, outcome });
        this.#bus.emit(event, outcome as never);
        // A credit (this tab's, another's, another device's) changed the balance.
        if (event === 'reward:credited') void this.#balance.wallet().then((w) => w.refresh());
      },
      storage: this.#storage,
      writes: this.#writes,
      tabs: this.#tabs,
      earned: this.#earned,
      describe: (intent, record, reason, remote) => this.#outcome(intent, record, reason, remote),
    });
    this.#balance = new BalanceMode({
      bus: this.#bus,
      relay: this.#relay,
      sessions,
      catalog: this.#catalog,
      queue: this.#queue,
      tabs: this.#tabs,
      retry: options.retry,
      lockName,
      ready: () => this.ready,
      linked: () => this.#account.linked(),
      adopt: (player) => this.#adopt(player),
      flush: () => this.flush(),
      destroyed: () => this.#destroyed,
    });
    this.#parts = {
      bus,
      catalog: this.#catalog,
      earned: this.#earned,
      sessions,
      queue: this.#queue,
      outcomes: this.#outcomes,
      balance: this.#balance,
      adopt: (player) => this.#adopt(player),
      leftHere: (id) => takeLeft(handovers, id),
      destroyed: () => this.#destroyed,
    };
    if (typeof window !== 'undefined') {
      window.addEventListener('online', this.#onOnline);
      window.addEventListener('offline', this.#onOffline);
    }
    this.#queue.adopt(unlockedEarly);
    this.ready = this.#load();
    // Said as this bus's own: the bus that got the answer was destroyed, and no one else shows it.
    this.#stopTaking = takeHandovers(handovers, ({ event, outcome }) => {
      this.#queue.forget(outcome.intent.id);
      this.#outcomes.settle({ ...outcome, remote: false }, event);
    });
  }

  /** The linked player, if any. */
  get player(): PlayerSession | undefined {
    return this.#sessions.current;
  }

  /** False after a request found the relay out of reach (or the browser went offline), until one gets through. */
  get online(): boolean {
    return this.#queue.online;
  }

  /** The relay's payout mode, once its catalog is known (stored or fetched). */
  get payoutMode(): PayoutMode | undefined {
    return this.#catalog.payoutMode;
  }

  async link(gamertag: string, options: LinkOptions = {}): Promise<PlayerSession> {
    await this.ready;
    await this.#balance.guesting;
    // A guest links with its token: its credits move to the player's balance.
    const guest = this.#sessions.current?.guest ? this.#sessions.current : undefined;
    // Not while one of the guest's claims is on its way (from any tab of this device): answered
    // after the merge, it would be credited to the guest, out of the player's reach.
    const link = () => this.#relay.link(gamertag, guest?.token, options);
    const linked = this.#sessions.linking(gamertag);
    let a = await (guest ? this.#queue.exclusive(link) : link()).finally(linked);
    // A guest's token the relay no longer knows (lapsed) merges nothing: the player links alone.
    if (guest && !a.ok && a.status === 400) a = await this.#relay.link(gamertag, undefined, options);
    const player = answer(a);
    this.#queue.setOnline(true);
    await this.#adopt(player);
    if (player.merge) this.#bus.emit('player:merged', player.merge);
    this.#tabs.post({ type: 'linked', player });
    await this.#refresh();
    void this.flush();
    return player;
  }

  unlock(achievementId: string, details?: RewardIntent['details'], options?: UnlockOptions): string | undefined {
    return unlockWith(this.#parts, achievementId, details, options);
  }

  async catalog(): Promise<CatalogEntry[]> {
    await this.ready;
    await this.#catalog.refresh();
    return [...(this.#catalog.byId?.values() ?? [])];
  }

  /** The relay's tournaments: their prizes come from the game's server, never from unlock(). */
  async tournaments(): Promise<TournamentCatalogEntry[]> {
    await this.ready;
    await this.#catalog.refresh();
    return this.#catalog.tournaments;
  }

  pending(): RewardIntent[] {
    return this.#queue.list().sort((a, b) => a.occurredAt.localeCompare(b.occurredAt));
  }

  async history(): Promise<RewardRecord[]> {
    await this.ready;
    await this.#refreshHistory();
    return [...this.#outcomes.history];
  }

  flush(): Promise<void> {
    return this.#destroyed ? Promise.resolve() : this.#queue.flush();
  }

  rampSession(request: RampSessionRequest): Promise<RampSession> {
    return this.#account.rampSession(request);
  }

  rampEnded(result: RampResult): void {
    this.#account.rampEnded(result);
  }

  withdrawal(id: string): Promise<WithdrawalRequestView> {
    return this.#account.withdrawal(id);
  }

  referralCode(): Promise<string> {
    return this.#account.referralCode();
  }

  async balance(): Promise<BalanceView> {
    await this.ready;
    return (await this.#balance.wallet()).balance();
  }

  async withdraw(sats?: number): Promise<WithdrawalView> {
    await this.ready;
    return (await this.#balance.wallet()).withdraw(sats);
  }

  destroy(): void {
    this.#destroyed = true;
    this.#stopTaking();
    this.#stream.close();
    const { sending, answered } = this.#queue.stop();
    leave(this.#handovers, sending, answered);
    this.#balance.stop();
    if (typeof window !== 'undefined') {
      window.removeEventListener('online', this.#onOnline);
      window.removeEventListener('offline', this.#onOffline);
    }
  }

  async #probeRelay() {
    if (!('unreachable' in (await this.#relay.catalog()))) this.#queue.setOnline(true);
  }

  async #load() {
    const [player] = await Promise.all([this.#sessions.load(), this.#catalog.load(this.#storage), this.#queue.load()]);
    if (player) {
      await this.#outcomes.follow(player.userId);
      void this.#refresh();
      this.#listenToRelay();
      this.#balance.start();
    } else this.#balance.guestIfBalance();
  }

  async #adopt(player: PlayerSession) {
    const was = this.#sessions.current;
    // A guest that linked a gamertag: what it still had queued is the player's (its token stops working).
    if (was?.guest && !player.guest) this.#queue.reassign(was.userId, player.userId);
    this.#sessions.adopt(player);
    await this.#outcomes.follow(player.userId);
    this.#queue.assignTo(player.userId);
    await this.#writes.written;
    this.#account.forgetRamp();
    this.#listenToRelay();
    this.#bus.emit('player:linked', player);
    this.#balance.playerChanged();
  }

  /** Listens to the player's event stream: purchases, and rewards paid on other devices. */
  #listenToRelay() {
    this.#stream.open(this.#destroyed ? undefined : this.#sessions.current);
  }

  /** What another tab said: a player it linked, or an outcome it heard. */
  heard(m: TabMessage) {
    heardFromTab(this.#parts, m);
  }

  #refresh(): Promise<unknown> {
    return Promise.all([this.#catalog.refresh().then(() => this.#balance.start()), this.#refreshHistory()]);
  }

  async #refreshHistory() {
    const player = this.#sessions.current;
    if (!player) return;
    const a = await this.#relay.history(player.token);
    if (a.ok) this.#outcomes.replaceHistory(player.userId, a.body.rewards);
  }

  #outcome(intent: RewardIntent, record: RewardRecord | undefined, reason: string | undefined, remote: boolean): RewardOutcome {
    return {
      intent,
      ...(record ? { record } : {}),
      sats: record?.sats ?? this.#catalog.byId?.get(intent.achievementId)?.sats ?? 0,
      gamertag: this.#sessions.gamertagOf(intent.userId),
      ...(reason ? { reason } : {}),
      remote,
    };
  }
}
