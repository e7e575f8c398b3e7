import type { EventEmitter } from 'eventemitter3';
import type { PlayerSession } from '../wire/relay-api.js';
import type { Wallet } from './balance/index.js';
import { RewardBusError } from './bus-error.js';
import type { RelayClient, RetryOptions } from './delivery/index.js';
import type { RewardBusEvents } from './events.js';
import type { PlayerSessions } from './players/index.js';
import type { IntentQueue } from './queue/index.js';
import type { CatalogCache } from './rules/index.js';
import type { TabChannel } from './tabs/index.js';

/** What balance mode needs of the courier around it. */
export interface BalanceModeParts {
  bus: Pick<EventEmitter<RewardBusEvents>, 'emit'>;
  relay: RelayClient;
  sessions: PlayerSessions;
  catalog: CatalogCache;
  queue: Pick<IntentQueue, 'list' | 'setOnline'>;
  tabs: TabChannel;
  retry: RetryOptions | undefined;
  /** The game's Web Lock name (the queue's); the guest is made under `<lockName>:guest`. */
  lockName: string;
  /** The courier's stored player, queue and catalog loaded. */
  ready(): Promise<void>;
  /** The current player's live session, or a RewardBusError. */
  linked(): Promise<PlayerSession>;
  /** Makes a player (here, a new guest) the current one, as a link does. */
  adopt(player: PlayerSession): Promise<void>;
  flush(): Promise<void>;
  destroyed(): boolean;
}

/**
 * Balance mode, the courier's part of it (the relay credits rewards to a balance the player
 * withdraws from): the wallet (balance, withdrawals, heartbeats; a chunk of its own, loaded on
 * the first need), and the guest that the first unlock with no player makes.
 */
export class BalanceMode {
  #wallet: Promise<Wallet> | undefined;
  /** A guest being made (the first unlock with no player). */
  #guesting: Promise<void> | undefined;
  #again = false;
  /**
   * The relay's human check refused to make a guest (`verifyLink`, a captcha): none is asked for
   * again until a player links, and what waits for a player is said waiting for a gamertag.
   */
  #refused = false;
  readonly #toldWaiting = new Set<string>();

  constructor(private readonly p: BalanceModeParts) {}

  /** Settles once a guest being made is made (or could not be). */
  get guesting(): Promise<void> | undefined {
    return this.#guesting;
  }

  /** With a player or guest, and a catalog that credits rewards: the wallet keeps the balance and sends heartbeats. */
  start() {
    if (this.p.catalog.credits && this.p.sessions.current && !this.p.destroyed()) void this.wallet();
  }

  /** The player changed: the wallet follows, or starts if the relay credits rewards. */
  playerChanged() {
    this.#refused = false;
    this.#toldWaiting.clear();
    if (this.#wallet) void this.#wallet.then((w) => w.playerChanged());
    else this.start();
  }

  stop() {
    void this.#wallet?.then((w) => w.stop());
  }

  /** Loaded once, on the first need: a credit, balance(), withdraw(), or balance mode with a player. */
  wallet(): Promise<Wallet> {
    const p = this.p;
    this.#wallet ??= import('./balance/index.js').then(
      ({ Wallet }) => {
        const w = new Wallet({
          relay: p.relay,
          player: () => p.sessions.current,
          session: () => p.linked(),
          expire: (userId) => p.sessions.expire(userId),
          waitsForLink: () => p.sessions.waitsForLink(p.sessions.current?.userId),
          emit: (event, e) => p.bus.emit(event, e as never),
          credits: () => p.catalog.credits,
          retry: p.retry,
        });
        if (p.destroyed()) w.stop();
        else void w.refresh();
        return w;
      },
      (err: unknown) => {
        this.#wallet = undefined;
        throw new RewardBusError('relay_unreachable', `rewardbus could not load its wallet: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
    return this.#wallet;
  }

  /**
   * Balance mode with no player: the first unlock makes a guest (`POST /v1/players` with `{}`),
   * kept as a player's session, and the intents waiting for a player are the guest's. link()
   * later merges the guest into the player. Out of reach, the next unlock (or going online) asks again.
   */
  guestIfBalance() {
    const p = this.p;
    if (p.destroyed()) return;
    // Asked again while a look is under way (an unlock as the bus starts): one more look after it,
    // or that unlock would wait for the next one.
    if (this.#guesting) return void (this.#again = true);
    this.#guesting = (async () => {
      await p.ready();
      const waiting = () => !p.sessions.current && !p.destroyed() && p.queue.list().some((i) => !i.userId);
      // Nothing waits for a player: no request at all (an instant relay's game that has not linked yet).
      if (!waiting()) return;
      if (p.catalog.payoutMode === undefined) await p.catalog.refresh();
      if (p.catalog.payoutMode !== 'balance' || !waiting()) return;
      // One tab at a time: tabs that unlock at once make one guest, not one each, whose credits
      // the other tabs' guests would never share. The next in line takes the one stored.
      await oneTab(`${p.lockName}:guest`, async () => {
        if (!waiting()) return;
        const made = await p.sessions.stored();
        if (made) {
          await p.adopt(made);
          return void p.flush();
        }
        // Refused before: the stored player above (another tab's link, heard or not) is all there is to take.
        if (this.#refused) return this.#waitForLink();
        const a = await p.relay.guest();
        // Out of reach: the browser's coming back online (or the next unlock) asks again.
        if ('unreachable' in a) p.queue.setOnline(false);
        if (p.sessions.current || p.destroyed()) return;
        if (!a.ok && a.status === 403 && a.problem?.code === 'link_refused') {
          this.#refused = true;
          return this.#waitForLink();
        }
        if (!a.ok) return;
        p.queue.setOnline(true);
        // Stored before the lock is let go (adopt waits for it): the next tab in line reads it.
        await p.adopt(a.body);
        p.tabs.post({ type: 'linked', player: a.body });
        void p.flush();
      });
    })()
      .catch((err: unknown) => {
        p.bus.emit('error', err instanceof Error ? err : new Error(String(err)));
      })
      .finally(() => {
        this.#guesting = undefined;
        if (this.#again) {
          this.#again = false;
          this.guestIfBalance();
        }
      });
  }

  /** The game's link (with its check) is what the intents with no player wait for: each said once, as a guest's unlock paid at once is. */
  #waitForLink() {
    for (const intent of this.p.queue.list()) {
      if (intent.userId || this.#toldWaiting.has(intent.id)) continue;
      this.#toldWaiting.add(intent.id);
      this.p.bus.emit('reward:waiting', { intent, reason: 'gamertag_required' });
    }
  }
}

/** Runs `work` under a Web Lock where the runtime has them (tabs of one game); as it is elsewhere. */
function oneTab(name: string, work: () => Promise<void>): Promise<void> {
  const locks = typeof navigator === 'undefined' ? undefined : (navigator as Navigator & { locks?: LockManager }).locks;
  return locks?.request ? locks.request(name, work).then(() => undefined) : work();
}
