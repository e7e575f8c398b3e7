import type { RewardRecord } from '../../wire/relay-api.js';
import { backoffDelay, type RelayAnswer } from '../delivery/index.js';
import { eventOf, type FinalEvent, type RewardIntent } from '../events.js';
import { INTENT } from '../intent/index.js';
import { lanesOf } from './batches.js';
import { FlushTimer } from './flush-timer.js';
import { pool } from './pool.js';
import type { QueueEvents, QueueOptions } from './queue-options.js';
import { TabLock } from './tab-lock.js';

/**
 * The durable queue of reward intents: peek, send, and delete only on the relay's final answer.
 * Retries what may succeed later, with backoff; one tab at a time sends.
 */
export class IntentQueue {
  readonly #byId = new Map<string, RewardIntent>();
  /**
   * Intents unlock() added since the map was last read: kept in an array, so the game loop
   * appends one item instead of growing a large Map. #intents() moves them in.
   */
  readonly #added: RewardIntent[] = [];
  /** Intents this tab is sending right now. */
  readonly #sending = new Set<string>();
  #online = true;
  readonly #timer = new FlushTimer(() => void this.flush(false));
  #draining: Promise<void> | undefined;
  #again = false;
  #probe = false;
  #stopped = false;
  readonly #lock: TabLock;
  /** Intents adopted without reading the store: the next send reads it, lock held or not. */
  #reread = false;

  constructor(
    private readonly o: QueueOptions,
    private readonly events: QueueEvents,
  ) {
    this.#lock = new TabLock(o.lockName, o.storage, o.tab, o.knock);
  }

  /** False after a request found the relay out of reach, until one gets through. */
  get online(): boolean {
    return this.#online;
  }

  /** Every intent not yet answered for good, by id. */
  #intents(): Map<string, RewardIntent> {
    if (this.#added.length) {
      for (const i of this.#added) this.#byId.set(i.id, i);
      this.#added.length = 0;
    }
    return this.#byId;
  }

  /** Intents not yet answered for good. */
  list(): RewardIntent[] {
    return [...this.#intents().values()];
  }

  /** Reads the intents stored by this device's earlier sessions (and its other tabs). */
  async load() {
    const stored = await this.o.storage.entries<RewardIntent>(INTENT);
    const intents = this.#intents();
    // One added meanwhile (unlocked before the load) is the copy the game was told of: it stays
    // (another tab's changes to the stored copy, its attempts and backoff, only time the retries).
    for (const [, i] of stored) if (!intents.has(i.id)) intents.set(i.id, i);
    this.o.earned.drop();
  }

  /** A new intent, earned at `earnedAt` (its occurredAt, which unlock() already has as a number). */
  add(intent: RewardIntent, earnedAt = Date.parse(intent.occurredAt)) {
    this.#added.push(intent);
    this.o.earned.queued(intent.achievementId, earnedAt);
    this.o.writes.set(INTENT + intent.id, intent);
    this.#timer.schedule(0);
  }

  /**
   * Intents unlock() stored before this queue existed (the bus's first moments). Not stored
   * again: another tab may have sent and deleted them meanwhile, and the next drain, which reads
   * the store, lets them go (that tab's outcome is said here through the tab channel).
   */
  adopt(intents: RewardIntent[]) {
    for (const i of intents) {
      this.#added.push(i);
      this.o.earned.queued(i.achievementId, Date.parse(i.occurredAt));
    }
    if (intents.length) {
      this.#reread = true;
      this.#timer.schedule(0);
    }
  }

  /** Intents unlocked before any player was linked belong to this one. */
  assignTo(userId: string) {
    for (const i of this.#intents().values()) if (!i.userId) this.#save(Object.assign(i, { userId }));
    this.o.earned.drop();
  }

  /**
   * A guest linked a gamertag (its token stops working): its intents still queued are the
   * player's now, those that waited for a gamertag too: sent now, same key. From this tab too
   * when another linked (it had no timer for those, and the linking tab may not know of them).
   */
  reassign(from: string, to: string) {
    let moved = false;
    for (const i of this.#intents().values()) {
      if (i.userId !== from) continue;
      if (i.waitsForGamertag) {
        delete i.waitsForGamertag;
        i.nextAttemptAt = i.notBefore ?? 0;
      }
      this.#save(Object.assign(i, { userId: to }));
      moved = true;
    }
    this.o.earned.drop();
    if (moved) this.#timer.schedule(0);
  }

  /** Another tab asked for the lock: this one lets go of it once its send in progress is done. */
  yieldLock() {
    this.#lock.yield();
  }

  /**
   * Runs `work` while no tab of this device sends: what was on its way has been answered, and
   * nothing goes until `work` ends (a guest's link: a claim of the guest's answered after the
   * merge would stay the guest's, whose token then works no more).
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.#lock.run(() => work());
  }

  /** True while this tab waits for the relay's answer to this intent. */
  sending(id: string): boolean {
    return this.#sending.has(id);
  }

  /**
   * The relay answered this intent for good: it leaves the queue, in storage too. The queue calls
   * this on its own answers; the courier on those another tab or the event stream heard.
   * Returns the intent if this tab had it.
   */
  forget(id: string): RewardIntent | undefined {
    const intent = this.#intents().get(id);
    if (intent) {
      this.#drop(intent);
      this.o.writes.write([[INTENT + id, undefined]]);
    }
    return intent;
  }

  #drop(intent: RewardIntent) {
    this.#intents().delete(intent.id);
    this.o.earned.drop(intent.achievementId);
  }

  /**
   * Sends every due intent now; resolves when nothing more can be done until a retry is due.
   * `probe`: while the relay seems out of reach, first try the oldest intent to see if it is back.
   */
  flush(probe = true): Promise<void> {
    if (probe) this.#probe = true;
    if (this.#stopped) return Promise.resolve();
    if (this.#draining) {
      this.#again = true;
      return this.#draining;
    }
    this.#draining = (async () => {
      do {
        this.#again = false;
        await this.#lock.run(async (fresh) => {
          const read = fresh || this.#reread;
          this.#reread = false;
          // The store is read back only once this tab's own writes are in it. Otherwise what was
          // just unlocked goes while it is being stored: its key is minted, the storage applies
          // writes in order (its deletion lands after it), and the page's main thread is waited
          // on once for both the commit and the answer, not once after the other.
          if (read) await this.o.writes.written;
          await this.#drain(read);
        });
      } while (this.#again && !this.#stopped);
    })()
      .catch((err: unknown) => this.events.error(err))
      .finally(() => (this.#draining = undefined));
    return this.#draining;
  }

  setOnline(online: boolean) {
    if (online === this.#online) return;
    this.#online = online;
    // Back online: what waited only for the network goes now, not at its backoff time; what
    // waits for the player's play time still waits.
    if (online) for (const i of this.#intents().values()) i.nextAttemptAt = i.notBefore ?? 0;
    this.events.reachable(online);
  }

  /**
   * Sends nothing more. A claim already on its way is not aborted (its outcome would be unknown):
   * its answer is taken as any other. Returns their ids, and when they are answered.
   */
  stop(): { sending: string[]; answered: Promise<void> } {
    this.#stopped = true;
    this.#timer.stop();
    this.#lock.stop();
    return { sending: [...this.#sending], answered: this.#draining ?? Promise.resolve() };
  }

  /**
   * Sends what is due, pass after pass. `read`: the lock was just taken, so another tab may have
   * queued or finished intents: the store is read first. While this tab keeps the lock, no other
   * sends, and what this one just unlocked goes from memory, as it is being stored.
   */
  async #drain(read: boolean) {
    for (;;) {
      if (this.#stopped) return;
      // A store that cannot be read (a suspended tab's IndexedDB gone, a disk failing) holds
      // nothing this tab can act on: what it has in memory goes all the same, under its keys.
      if (read) await this.#readStore().catch((err: unknown) => this.events.error(err));
      read = false;
      const now = Date.now();
      const player = this.o.sessions.current;
      const sendable = [...this.#intents().values()].filter((i) => this.#sendable(i, player));
      let due = sendable.filter((i) => i.nextAttemptAt <= now);
      if (!due.length && this.#probe && !this.#online && sendable.length) due = sendable.slice(0, 1);
      this.#probe = false;
      if (!due.length) break;
      let unreachable: RewardIntent | undefined;
      await pool(lanesOf(due, player, this.o.relay.batchMax), this.o.concurrency, async (batches) => {
        for (const b of batches) if (!unreachable && (await this.#send(b)) === 'unreachable') unreachable = b[0];
      });
      if (unreachable) {
        // What this pass did not get to waits as long as the intent that found the relay gone,
        // or every timer tick would try again while offline.
        const until = unreachable.nextAttemptAt;
        for (const i of due) if (i.nextAttemptAt <= now) this.#save(Object.assign(i, { nextAttemptAt: until }));
      }
      await this.o.writes.written;
      if (unreachable) break;
    }
    // Intents unlocked before any player, waiting for the guest's gamertag or for the human check,
    // wait for link(), which flushes: no timer for them, or it would go off at once, again and again.
    const player = this.o.sessions.current;
    let next = Infinity;
    for (const i of this.#intents().values()) if (this.#sendable(i, player) && i.nextAttemptAt < next) next = i.nextAttemptAt;
    if (next < Infinity) this.#timer.schedule(Math.max(0, next - Date.now()));
  }

  /** sendableBy, and its player's renewal not refused by the relay's human check (they wait for link()). */
  #sendable(i: RewardIntent, player: { userId: string } | undefined): boolean {
    return sendableBy(i, player) && !this.o.sessions.waitsForLink(i.userId ?? player?.userId);
  }

  /** Takes in what the store has: intents other tabs queued, those they finished, players they linked. */
  async #readStore() {
    // Only what this tab had before the read can have been finished by another: one unlocked
    // while the store is read may be stored after what the read sees (IndexedDB orders them so).
    const known = new Set(this.#intents().keys());
    const stored = new Map((await this.o.storage.entries<RewardIntent>(INTENT)).map(([, i]) => [i.id, i]));
    for (const [id, i] of this.#intents()) {
      if (known.has(id) && !stored.has(id) && !this.o.writes.pending(INTENT + id)) this.#drop(i);
    }
    for (const [id, i] of stored) {
      if (!this.#intents().has(id)) {
        this.#intents().set(id, i);
        this.o.earned.drop(i.achievementId);
      }
    }
    // Another tab may have linked a player waiting for the human check (unheard with no tab
    // channel): forUser looks at the session it stored, asking the relay nothing.
    for (const u of new Set([...this.#intents().values()].map((i) => i.userId))) if (this.o.sessions.waitsForLink(u)) await this.o.sessions.forUser(u!);
  }

  /** Sends one player's intents: a claim, or a batch of them. */
  async #send(batch: RewardIntent[]): Promise<'done' | 'retry' | 'unreachable'> {
    const userId = batch[0]!.userId!;
    const session = await this.o.sessions.forUser(userId);
    // Stopped meanwhile (or before this batch's turn in its lane): nothing sent, all kept for the next bus.
    if (this.#stopped) return 'done';
    if (session === 'unreachable') {
      // Counted as a try, so its backoff grows: a renewal that keeps failing is not asked every second.
      for (const i of batch) this.#retry(Object.assign(i, { attempts: i.attempts + 1 }), 0, 'unreachable');
      return 'unreachable';
    }
    // The relay's human check refused the renewal (or this device has no session of the player's):
    // kept as they are, no attempt counted; sent once the game links the player (#sendable leaves them until then).
    if (session === 'check') return 'done';
    if (!session) {
      for (const i of batch) this.#finish(i, 'reward:rejected', undefined, 'player_unknown');
      return 'done';
    }
    const claims = batch.map((i) => {
      i.attempts++;
      this.#sending.add(i.id);
      return { idempotencyKey: i.id, achievementId: i.achievementId, occurredAt: i.occurredAt, ...(i.proof ? { proof: i.proof } : {}) };
    });
    const { idempotencyKey, ...one } = claims[0]!;
    const sending = claims.length > 1 ? this.o.relay.claimAll(session.token, claims) : this.o.relay.claim(session.token, idempotencyKey, one).then((a) => [a]);
    // Said once the request is on its way: the listeners (a page redrawing its list) do not hold it back.
    for (const i of batch) this.events.sent(i, i.attempts);
    const answers = await sending.finally(() => batch.forEach((i) => this.#sending.delete(i.id)));
    // Every answer taken in this turn, none awaited before the next: the batch's deletions and
    // outcomes go to storage in one write, not one write per intent (each a whole file rewritten
    // and synced for fileStorage, an IndexedDB transaction in browsers).
    const results = await Promise.all(batch.map((i, k) => this.#answered(i, userId, answers[k]!)));
    return results.includes('unreachable') ? 'unreachable' : 'done';
  }

  /** What the relay's answer to one intent's claim means for it. */
  async #answered(intent: RewardIntent, userId: string, a: RelayAnswer<RewardRecord>): Promise<'done' | 'retry' | 'unreachable'> {
    if ('unreachable' in a) return this.#retry(intent, 0, 'unreachable');
    this.setOnline(true);
    if (a.ok) {
      // A 2xx that is no record of this claim (a captive portal's page, a proxy's, another server's
      // JSON with a `status` of its own) is no answer: sent again.
      const r = a.body;
      const record = typeof r?.id === 'string' && typeof r.status === 'string' && (r.idempotencyKey === undefined || r.idempotencyKey === intent.id);
      const event = record ? eventOf(r.status) : undefined;
      return event ? this.#finish(intent, event, a.body, a.body.reason) : this.#retry(intent);
    }
    if (a.status === 401) {
      // The token lapsed or the relay's secret changed: link again, then send again.
      this.o.sessions.expire(userId);
      return this.#retry(intent);
    }
    if (a.status === 425) return this.#tooEarly(intent, a.problem?.retryAt, a.retryAfterMs);
    // A guest's claim of an achievement paid at once: nothing was recorded, and the same intent is
    // payable once the player has a gamertag. Kept, not sent again until then (no answer but the
    // link changes this one).
    if (a.status === 403 && a.problem?.code === 'gamertag_required') return this.#waitForGamertag(intent);
    if (a.status === 408 || a.status === 409 || a.status === 429 || a.status >= 500) return this.#retry(intent, a.retryAfterMs);
    return this.#finish(intent, 'reward:rejected', undefined, a.problem?.code ?? `http_${a.status}`);
  }

  #retry(intent: RewardIntent, retryAfterMs = 0, why: 'retry' | 'unreachable' = 'retry'): typeof why {
    if (why === 'unreachable') this.setOnline(false);
    intent.nextAttemptAt = Date.now() + backoffDelay(intent.attempts, this.o.retry, retryAfterMs);
    this.#save(intent);
    return why;
  }

  /** Not played long enough yet: nothing was recorded, so the same key claims again when due. */
  async #tooEarly(intent: RewardIntent, retryAt: string | undefined, retryAfterMs: number | undefined): Promise<'retry'> {
    const { tooEarlyUntil } = await import('./too-early.js');
    const at = tooEarlyUntil(Date.now(), retryAt, retryAfterMs, backoffDelay(intent.attempts, this.o.retry));
    intent.nextAttemptAt = intent.notBefore = at;
    this.#save(intent);
    this.events.waiting({ intent, retryAt: at, reason: 'too_early' });
    return 'retry';
  }

  #waitForGamertag(intent: RewardIntent): 'retry' {
    intent.waitsForGamertag = true;
    // A backoff too: should it be sent while still a guest's (its guest no longer this device's
    // player, sendableBy), it is asked again later, not in a loop.
    intent.nextAttemptAt = Date.now() + backoffDelay(intent.attempts, this.o.retry);
    this.#save(intent);
    this.events.waiting({ intent, reason: 'gamertag_required' });
    return 'retry';
  }

  /** The relay's final answer: the intent is deleted here, before anyone hears of it. */
  #finish(intent: RewardIntent, event: FinalEvent, record: RewardRecord | undefined, reason: string | undefined): 'done' {
    this.forget(intent.id);
    this.events.settled(intent, event, record, reason);
    return 'done';
  }

  /** Stores an intent, unless its final answer came meanwhile (then it stays gone). */
  #save(intent: RewardIntent) {
    if (this.#intents().get(intent.id) === intent) this.o.writes.write([[INTENT + intent.id, intent]]);
  }
}

/**
 * Whether an intent may be sent now: it has a player (its own, or the current one for an intent
 * unlocked before any), and is not waiting for that guest to link a gamertag. One a guest no
 * longer current left waiting is sent: its guest is gone (its token lapsed past renewal), and
 * the relay's answer ends it as any of that guest's intents.
 */
const sendableBy = (i: RewardIntent, player: { userId: string } | undefined) => !!(i.userId ?? player) && !(i.waitsForGamertag && i.userId === player?.userId);
