import type { CatalogEntry, PlayerSession, RampSession, RampSessionRequest, RewardRecord, WithdrawalRequestView } from '../wire/relay-api.js';
import type { RetryOptions } from './backoff.js';
import { earnBlock, lastEarned } from './earn-rules.js';
import type { RewardBusEvents, RewardIntent, RewardOutcome } from './events.js';
import { GuardedEmitter } from './guarded-emitter.js';
import { answer, RewardBusError } from './bus-error.js';
import { createRelayClient, type RelayClient } from './relay-client.js';
import { defaultStorage, type RewardStorage } from './storage.js';
import { EVENT_OF, INTENT, IntentQueue } from './intent-queue.js';
import { listenToRelay } from './relay-stream.js';
import { createTabChannel, type FinalEvent, type TabMessage } from './tab-channel.js';
import { createWriteBatch } from './write-batch.js';

export interface RewardBusOptions {
  /** Where the relay is, e.g. `https://rewards.example.com`. */
  relayUrl: string;
  /** Default: IndexedDB in browsers, `.rewardbus/client-queue.json` in Node. */
  storage?: RewardStorage;
  fetch?: typeof fetch;
  retry?: RetryOptions;
  /** Per request to the relay. Default 10 s. */
  timeoutMs?: number;
  /** Intents sent at once when a backlog drains. Default 6. */
  concurrency?: number;
}

const HISTORY_KEPT = 100;
const uuid = () => crypto.randomUUID();

/**
 * The game's side of rewardbus: `unlock()` turns an achievement into a reward intent with its
 * own idempotency key, keeps it in durable storage, and sends it until the relay answers for good.
 */
export class RewardBus extends GuardedEmitter<RewardBusEvents> {
  /** Resolved once the stored player, queue and catalog are loaded. */
  readonly ready: Promise<void>;
  readonly #storage: RewardStorage;
  readonly #relay: RelayClient;
  readonly #opts: RewardBusOptions;
  readonly #queue: IntentQueue;
  readonly #sessions = new Map<string, PlayerSession>();
  #player: PlayerSession | undefined;
  #catalog: Map<string, CatalogEntry> | undefined;
  #catalogFetch: Promise<void> | undefined;
  #history: RewardRecord[] = [];
  readonly #writes: ReturnType<typeof createWriteBatch>;
  readonly #tabs: ReturnType<typeof createTabChannel>;
  #destroyed = false;
  #stream: EventSource | undefined;
  #ramp: RampSession | undefined;
  /** Reward records this bus has announced, so the same outcome heard twice is said once. */
  readonly #announced = new Set<string>();
  readonly #onOnline = () => void this.flush();

  constructor(options: RewardBusOptions) {
    super();
    this.#opts = options;
    this.#storage = options.storage ?? defaultStorage();
    this.#writes = createWriteBatch(this.#storage, (err) => this.#error(err));
    this.#relay = createRelayClient(options);
    const name = `rewardbus:${options.relayUrl}`;
    this.#tabs = createTabChannel(name, (m) => this.#heard(m));
    this.#queue = new IntentQueue(
      { storage: this.#storage, writes: this.#writes, relay: this.#relay, lockName: name, tab: uuid(), concurrency: options.concurrency ?? 6, retry: options.retry },
      {
        player: () => this.#player,
        session: (userId) => this.#sessionFor(userId),
        expire: (userId) => {
          const s = this.#sessions.get(userId);
          if (s) this.#sessions.set(userId, { ...s, expiresAt: new Date(0).toISOString() });
        },
        sent: (intent, attempt) => this.emit('reward:sent', { intent, attempt }),
        settled: (intent, event, record, reason) => this.#settled(intent, event, record, reason),
        reachable: (online) => this.emit(online ? 'relay:online' : 'relay:offline'),
        error: (err) => this.#error(err),
      },
    );
    if (typeof window !== 'undefined') window.addEventListener('online', this.#onOnline);
    this.ready = this.#load();
    this.ready.then(() => this.flush(), (err: unknown) => this.#error(err));
  }

  /** The linked player, if any. */
  get player(): PlayerSession | undefined {
    return this.#player;
  }

  /** False after a request found the relay out of reach, until one gets through. */
  get online(): boolean {
    return this.#queue.online;
  }

  /** Links the player by gamertag; remembered across reloads. Rejects with a RewardBusError. */
  async link(gamertag: string): Promise<PlayerSession> {
    await this.ready;
    const player = answer(await this.#relay.link(gamertag));
    this.#queue.setOnline(true);
    await this.#adopt(player);
    this.#tabs.post({ type: 'linked', player });
    void this.#refresh().then(() => this.flush());
    return player;
  }

  /**
   * Unlocks an achievement: synchronous and cheap, for the game loop. Returns the intent's id,
   * or undefined when the player cannot earn it now (then `reward:skipped` says why).
   */
  unlock(achievementId: string, details?: RewardIntent['details']): string | undefined {
    const block = this.#catalog && earnBlock(this.#catalog.get(achievementId), this.#earnedAt(achievementId), Date.now());
    if (block) {
      this.emit('reward:skipped', { achievementId, ...block });
      return undefined;
    }
    const intent: RewardIntent = {
      id: uuid(),
      achievementId,
      occurredAt: new Date().toISOString(),
      ...(this.#player ? { userId: this.#player.userId } : {}),
      ...(details ? { details } : {}),
      attempts: 0,
      nextAttemptAt: 0,
    };
    this.#queue.add(intent);
    const sats = this.#catalog?.get(achievementId)?.sats;
    this.emit('reward:queued', { intent, ...(sats === undefined ? {} : { sats }), offline: !this.#queue.online });
    return intent.id;
  }

  /** The relay's catalog (the last one seen, when the relay is out of reach). */
  async catalog(): Promise<CatalogEntry[]> {
    await this.ready;
    await this.#refreshCatalog();
    return [...(this.#catalog?.values() ?? [])];
  }

  /** Intents not yet answered for good, oldest first. */
  pending(): RewardIntent[] {
    return [...this.#queue.intents.values()].sort((a, b) => a.occurredAt.localeCompare(b.occurredAt));
  }

  /** The linked player's rewards, newest first (the last ones seen, when the relay is out of reach). */
  async history(): Promise<RewardRecord[]> {
    await this.ready;
    await this.#refreshHistory();
    return [...this.#history];
  }

  /**
   * Sends every due intent now; resolves when nothing more can be done until a retry is due.
   * While the relay seems out of reach, it first tries the oldest intent to see if it is back.
   */
  flush(): Promise<void> {
    return this.#destroyed ? Promise.resolve() : this.#queue.flush();
  }

  /**
   * A ramp (buy sats) session for the linked player: reused while it lives, a new one after its
   * 15 minutes. openRamp() shows its widget; other engines can load `widgetUrl` themselves.
   */
  async rampSession(request: RampSessionRequest): Promise<RampSession> {
    const player = await this.#linked();
    if (this.#ramp && Date.parse(this.#ramp.expiresAt) - 60_000 > Date.now()) return this.#ramp;
    return (this.#ramp = answer(await this.#relay.rampSession(player.token, request)));
  }

  /** A withdrawal request through the relay: amount, status, expiry and its `lightning:` URI. */
  async withdrawal(id: string): Promise<WithdrawalRequestView> {
    const player = await this.#linked();
    return answer(await this.#relay.withdrawal(player.token, id));
  }

  async #linked(): Promise<PlayerSession> {
    await this.ready;
    if (!this.#player) throw new RewardBusError('not_linked', 'Link a player first');
    const s = await this.#sessionFor(this.#player.userId);
    if (s === 'unreachable') throw new RewardBusError('relay_unreachable', 'The relay cannot be reached');
    if (!s) throw new RewardBusError('not_linked', 'Link the player again');
    return s;
  }

  /** Listens to the player's event stream (browsers): purchases, and rewards paid on other devices. */
  #listenToRelay() {
    this.#stream?.close();
    this.#stream = undefined;
    if (!this.#player || this.#destroyed) return;
    this.#stream = listenToRelay(this.#relay.eventsUrl(this.#player.token), {
      reward: (r) => this.#heardReward(r),
      completed: (e) => this.emit('ramp:completed', e),
      failed: (e) => this.emit('ramp:failed', e),
    });
  }

  #heardReward(record: RewardRecord) {
    if (this.#announced.has(record.id) || record.status === 'pending') return;
    // Not this device's intent: say it as heard from elsewhere, so no toast shows twice.
    const intent: RewardIntent = { id: record.id, achievementId: record.achievementId, occurredAt: record.createdAt, userId: record.userId, attempts: 0, nextAttemptAt: 0 };
    const outcome = this.#outcome(intent, record, record.reason, true);
    this.#remember(outcome);
    this.emit(EVENT_OF[record.status], outcome);
  }

  /** Stops sending and listening. Queued intents stay stored for the next bus. */
  destroy(): void {
    this.#destroyed = true;
    this.#stream?.close();
    this.#queue.stop();
    if (typeof window !== 'undefined') window.removeEventListener('online', this.#onOnline);
    this.#tabs.close();
    this.removeAllListeners();
  }

  async #load() {
    const [player, catalog, intents] = await Promise.all([
      this.#storage.get<string>('player'),
      this.#storage.get<CatalogEntry[]>('catalog'),
      this.#storage.entries<RewardIntent>(INTENT),
    ]);
    if (catalog) this.#catalog = new Map(catalog.map((c) => [c.id, c]));
    for (const [, i] of intents) this.#queue.intents.set(i.id, i);
    if (player) {
      this.#player = await this.#storage.get<PlayerSession>(`session:${player}`);
      if (this.#player) {
        this.#sessions.set(player, this.#player);
        this.#history = (await this.#storage.get<RewardRecord[]>(`history:${player}`)) ?? [];
        void this.#refresh();
        this.#listenToRelay();
      }
    }
  }

  async #adopt(player: PlayerSession) {
    this.#player = player;
    this.#sessions.set(player.userId, player);
    this.#history = (await this.#storage.get<RewardRecord[]>(`history:${player.userId}`)) ?? [];
    // Intents unlocked before any player was linked belong to this one.
    for (const i of this.#queue.intents.values()) if (!i.userId) this.#queue.save(Object.assign(i, { userId: player.userId }));
    this.#write([
      ['player', player.userId],
      [`session:${player.userId}`, player],
    ]);
    await this.#writes.written;
    this.#ramp = undefined;
    this.#listenToRelay();
    this.emit('player:linked', player);
  }

  async #refresh() {
    await Promise.all([this.#refreshCatalog(), this.#refreshHistory()]);
  }

  /**
   * The catalog changes with the relay's configuration, not during play: fetched once and shared
   * by every caller (the bus at start and link, a plugin, the game); fetched again only after a failure.
   */
  #refreshCatalog(): Promise<void> {
    this.#catalogFetch ??= this.#relay.catalog().then((a) => {
      if (!a.ok) {
        this.#catalogFetch = undefined;
        return;
      }
      this.#catalog = new Map(a.body.achievements.map((c) => [c.id, c]));
      this.#write([['catalog', a.body.achievements]]);
    });
    return this.#catalogFetch;
  }

  async #refreshHistory() {
    const player = this.#player;
    if (!player) return;
    const a = await this.#relay.history(player.token);
    if (!a.ok || this.#player !== player) return;
    this.#history = a.body.rewards;
    this.#write([[`history:${player.userId}`, this.#history]]);
  }

  /** When the player last earned (or queued) an achievement, for the catalog's repeat rules. */
  #earnedAt(achievementId: string): number | undefined {
    return lastEarned(achievementId, this.#player?.userId, this.#queue.intents.values(), this.#history);
  }

  async #sessionFor(userId: string): Promise<PlayerSession | undefined | 'unreachable'> {
    const s = this.#sessions.get(userId) ?? (await this.#storage.get<PlayerSession>(`session:${userId}`));
    if (!s || Date.parse(s.expiresAt) - 60_000 > Date.now()) return s;
    const a = await this.#relay.link(s.gamertag);
    if ('unreachable' in a || (!a.ok && a.status >= 500)) return 'unreachable';
    if (!a.ok) return undefined;
    if (a.body.userId !== userId) return undefined; // the gamertag now belongs to someone else
    this.#sessions.set(userId, a.body);
    this.#write([[`session:${userId}`, a.body]]);
    if (this.#player?.userId === userId) {
      this.#player = a.body;
      this.#listenToRelay();
    }
    return a.body;
  }

  #outcome(intent: RewardIntent, record: RewardRecord | undefined, reason: string | undefined, remote: boolean): RewardOutcome {
    return {
      intent,
      ...(record ? { record } : {}),
      sats: record?.sats ?? this.#catalog?.get(intent.achievementId)?.sats ?? 0,
      gamertag: this.#sessions.get(intent.userId ?? '')?.gamertag ?? this.#player?.gamertag ?? '',
      ...(reason ? { reason } : {}),
      remote,
    };
  }

  #settled(intent: RewardIntent, event: FinalEvent, record: RewardRecord | undefined, reason: string | undefined) {
    const outcome = this.#outcome(intent, record, reason, false);
    this.#remember(outcome);
    // Said only once the queue entry is gone from storage: a listener may rely on it.
    void this.#writes.written.then(() => {
      this.emit(event, outcome);
      this.#tabs.post({ type: 'outcome', event, outcome: { ...outcome, remote: true } });
    });
  }

  #remember({ record }: RewardOutcome) {
    if (record) this.#announced.add(record.id);
    if (!record || record.userId !== this.#player?.userId) return;
    // The newest page only, as the relay serves it: the full history lives in the relay's ledger.
    this.#history = [record, ...this.#history.filter((r) => r.id !== record.id)].slice(0, HISTORY_KEPT);
    this.#write([[`history:${record.userId}`, this.#history]]);
  }

  #heard(m: TabMessage) {
    if (this.#destroyed) return;
    if (m.type === 'linked') {
      if (m.player.userId !== this.#player?.userId) void this.#adopt(m.player);
      return;
    }
    this.#queue.intents.delete(m.outcome.intent.id);
    if (m.outcome.record && this.#announced.has(m.outcome.record.id)) return;
    this.#remember(m.outcome);
    this.emit(m.event, m.outcome);
  }

  #write(entries: Array<[string, unknown]>) {
    this.#writes.write(entries);
  }

  #error(err: unknown) {
    this.emit('error', err instanceof Error ? err : new Error(String(err)));
  }
}

export function createRewardBus(options: RewardBusOptions): RewardBus {
  return new RewardBus(options);
}
