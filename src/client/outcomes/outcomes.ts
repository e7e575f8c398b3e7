import type { RewardRecord } from '../../wire/relay-api.js';
import { eventOf, type FinalEvent, type RewardBusEvents, type RewardIntent, type RewardOutcome } from '../events.js';
import type { LastEarned } from '../rules/index.js';
import type { RewardStorage, WriteBatch } from '../storage/index.js';
import type { TabChannel } from '../tabs/index.js';

const HISTORY_KEPT = 100;
/**
 * Outcomes remembered for dedupe (each by its intent id and its record id): more than a backlog
 * drained while the event stream was away, which, back, resumes with a copy of each of them.
 */
const SAID_KEPT = 5000;
/** Storage key prefix of the player's history, `reward:<userId>:<recordId>`: an outcome writes one small key. */
const REWARD = 'reward:';

const isFinal = (event: FinalEvent | undefined) => event !== undefined && event !== 'reward:review' && event !== 'reward:held';
/**
 * A record this device saw waiting for the relay or an operator (needs_review, held). Not
 * `pending`: a claim being paid, or deferred until the player's play time (a 425), was never said
 * as waiting, so its outcome is said as any other, not "after review".
 */
const waiting = (r: RewardRecord | undefined) => !!r && eventOf(r.status) !== undefined && !isFinal(eventOf(r.status));
/** Where a settlement nobody here asked for is shown: the visible tab (or a process with no page). */
const shownHere = () => typeof document === 'undefined' || document.visibilityState !== 'hidden';

type Emit = <E extends FinalEvent>(event: E, ...args: Parameters<RewardBusEvents[E]>) => void;

export interface OutcomesOptions {
  emit: Emit;
  storage: RewardStorage;
  writes: WriteBatch;
  tabs: TabChannel;
  earned: LastEarned;
  /** Makes the outcome listeners hear: sats from the catalog, the gamertag from the sessions. */
  describe(intent: RewardIntent, record: RewardRecord | undefined, reason: string | undefined, remote: boolean): RewardOutcome;
}

/**
 * The one place where an intent's outcome becomes an event; the intent has left the queue by
 * then (the queue deletes its own on a final answer, the courier one that another tab or the
 * stream heard). The same outcome can arrive four ways (this tab's HTTP answer, another tab, the
 * relay's event stream, the history at link or reload), in any order: each (reward, outcome) is
 * said once, and nothing after a final one. A reward first said as `reward:review` is said
 * again when it settles, with `afterReview`. Keeps the player's recent history in step, in
 * storage one record per key.
 */
export class Outcomes {
  #history: RewardRecord[] = [];
  #byId = new Map<string, RewardRecord>();
  #userId: string | undefined;
  /** The last event said per intent id and record id. */
  readonly #said = new Map<string, FinalEvent>();

  constructor(private readonly o: OutcomesOptions) {}

  /** The current player's rewards, newest first, as last seen. */
  get history(): readonly RewardRecord[] {
    return this.#history;
  }

  /** Follows another player: their history as stored on this device. */
  async follow(userId: string) {
    let stored = (await this.o.storage.entries<RewardRecord>(`${REWARD}${userId}:`)).map(([, r]) => r);
    if (!stored.length) {
      // Stored by an earlier version as one array: kept, one key per record from now on.
      const legacy = `history:${userId}`;
      stored = (await this.o.storage.get<RewardRecord[]>(legacy)) ?? [];
      if (stored.length) this.o.writes.write([[legacy, undefined], ...stored.map((r): [string, unknown] => [this.#key(r), r])]);
    }
    this.#userId = userId;
    this.#set(stored.sort((a, b) => b.createdAt.localeCompare(a.createdAt)));
  }

  /**
   * The relay's page of the player's history replaces what this device had. A reward this
   * device last knew as waiting and now settled is said, once: a fresh device says nothing.
   */
  replaceHistory(userId: string, rewards: RewardRecord[]) {
    if (userId !== this.#userId) return;
    const before = this.#byId;
    const writes: Array<[string, unknown]> = [];
    for (const r of rewards) {
      const was = before.get(r.id);
      if (was?.status !== r.status || was.settledAt !== r.settledAt) writes.push([this.#key(r), r]);
    }
    const kept = new Set(rewards.map((r) => r.id));
    for (const r of before.values()) if (!kept.has(r.id)) writes.push([this.#key(r), undefined]);
    // A withdrawal in the history (balance mode) is no reward intent's outcome: the courier says it.
    const settled = rewards.filter((r) => !r.kind && waiting(before.get(r.id)) && isFinal(eventOf(r.status)));
    this.#set(rewards);
    if (writes.length) this.o.writes.write(writes);
    for (const r of settled) this.#say({ ...this.o.describe(intentOf(r), r, r.reason, !shownHere()), ...after(before.get(r.id)!.status === 'held') }, eventOf(r.status)!);
  }

  /**
   * An intent's outcome: this tab's own answer from the relay, or one another tab announced
   * (`remote`). The queue has let the intent go already: said once that deletion is stored (a
   * listener may rely on it); this tab's own is then told to the other tabs.
   */
  settle(outcome: RewardOutcome, event: FinalEvent) {
    this.#say(outcome, event);
  }

  /**
   * A record from the relay's event stream: perhaps this device's own intent (`intent`, which the
   * queue has just let go; `own` when this tab was sending it), perhaps a later outcome.
   */
  heardRecord(record: RewardRecord, intent?: RewardIntent, own = false) {
    const event = eventOf(record.status);
    if (!event) return;
    const later = !own && this.#wasWaiting(intent ?? intentOf(record), record);
    // A tournament's prize (its `place`) is no device's intent: said as this tab's own where it is seen.
    const prize = record.place !== undefined;
    this.#say(this.o.describe(intent ?? intentOf(record), record, record.reason, !own && !((later || prize) && shownHere())), event);
  }

  #say(outcome: RewardOutcome, event: FinalEvent) {
    const ids = [outcome.intent.id, outcome.record?.id];
    for (const id of ids) {
      const last = id === undefined ? undefined : this.#said.get(id);
      if (last === event || isFinal(last)) return;
    }
    if (isFinal(event) && this.#wasWaiting(outcome.intent, outcome.record)) Object.assign(outcome, after(this.#wasHeld(outcome.intent, outcome.record)));
    for (const id of ids) {
      if (id === undefined) continue;
      this.#said.delete(id);
      this.#said.set(id, event);
    }
    while (this.#said.size > 2 * SAID_KEPT) this.#said.delete(this.#said.keys().next().value!);
    if (outcome.record) this.#remember(outcome.record);
    void this.o.writes.written.then(() => {
      this.o.emit(event, outcome);
      if (!outcome.remote) this.o.tabs.post({ type: 'outcome', event, outcome: { ...outcome, remote: true } });
    });
  }

  /** Whether this device last said (or stored) the reward as waiting. */
  #wasWaiting(intent: RewardIntent, record: RewardRecord | undefined): boolean {
    const said = this.#said.get(intent.id);
    return (said !== undefined && !isFinal(said)) || (!!record && waiting(this.#byId.get(record.id)));
  }

  /** Whether that wait was an operator's hold. */
  #wasHeld(intent: RewardIntent, record: RewardRecord | undefined): boolean {
    return this.#said.get(intent.id) === 'reward:held' || (!!record && this.#byId.get(record.id)?.status === 'held');
  }

  #remember(record: RewardRecord) {
    if (record.userId !== this.#userId) return;
    // The newest page only, as the relay serves it: the full history lives in the relay's ledger.
    const history = (this.#history = [record, ...this.#history.filter((r) => r.id !== record.id)]);
    const dropped = history.splice(HISTORY_KEPT);
    for (const r of dropped) this.#byId.delete(r.id);
    this.#byId.set(record.id, record);
    this.o.earned.drop(record.achievementId);
    this.o.writes.write([[this.#key(record), record], ...dropped.map((r): [string, unknown] => [this.#key(r), undefined])]);
  }

  #set(history: RewardRecord[]) {
    this.#history = history;
    this.#byId = new Map(history.map((r) => [r.id, r]));
    this.o.earned.drop();
  }

  #key(r: RewardRecord) {
    return `${REWARD}${r.userId}:${r.id}`;
  }
}

/** How a settlement after a wait is marked: after review, and after a hold when it was one. */
const after = (held: boolean): Pick<RewardOutcome, 'afterReview' | 'afterHold'> => (held ? { afterReview: true, afterHold: true } : { afterReview: true });

/** An intent rebuilt from a record heard on the event stream (sent by another device). */
export function intentOf(record: RewardRecord): RewardIntent {
  return { id: record.idempotencyKey ?? record.id, achievementId: record.achievementId, occurredAt: record.createdAt, userId: record.userId, attempts: 0, nextAttemptAt: 0 };
}
