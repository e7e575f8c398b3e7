import type { RewardRecord, RewardStatus } from '../wire/relay-api.js';
import type { RewardBusEvents, RewardIntent, RewardOutcome } from './events.js';
import type { FinalEvent, TabChannel } from './tab-channel.js';
import type { WriteBatch } from './write-batch.js';

const HISTORY_KEPT = 100;
/** Outcomes remembered for dedupe: far more than can be in flight at once. */
const ANNOUNCED_KEPT = 1000;

export const EVENT_OF: Record<Exclude<RewardStatus, 'pending'>, FinalEvent> = {
  paid: 'reward:paid',
  rejected: 'reward:rejected',
  failed: 'reward:failed',
  needs_review: 'reward:review',
};

type Emit = <E extends FinalEvent>(event: E, ...args: Parameters<RewardBusEvents[E]>) => void;

/**
 * The one place where an intent's end becomes an event. The same outcome can arrive three
 * ways (this tab's HTTP answer, another tab, the relay's event stream), in any order: the first
 * copy is said, the others are dropped. Keeps the player's recent history in step.
 */
export class Outcomes {
  #history: RewardRecord[] = [];
  #userId: string | undefined;
  readonly #announced = new Set<string>();

  constructor(
    private readonly emit: Emit,
    private readonly writes: WriteBatch,
    private readonly tabs: TabChannel,
  ) {}

  /** The current player's rewards, newest first, as last seen. */
  get history(): readonly RewardRecord[] {
    return this.#history;
  }

  /** Follows another player: their history as stored on this device. */
  follow(userId: string, stored: RewardRecord[] | undefined) {
    this.#userId = userId;
    this.#history = stored ?? [];
  }

  /** The relay's page of the player's history replaces what this device had. */
  replaceHistory(userId: string, rewards: RewardRecord[]) {
    if (userId !== this.#userId) return;
    this.#history = rewards;
    this.writes.write([[`history:${userId}`, rewards]]);
  }

  /**
   * An intent ended. Said once the queue's deletion is stored (a listener may rely on it);
   * `remote` outcomes are only heard here, so the tab that got the answer shows the toast.
   */
  settle(outcome: RewardOutcome, event: FinalEvent) {
    if (!this.#first(outcome)) return;
    this.#remember(outcome.record);
    void this.writes.written.then(() => {
      this.emit(event, outcome);
      if (!outcome.remote) this.tabs.post({ type: 'outcome', event, outcome: { ...outcome, remote: true } });
    });
  }

  /** An outcome another tab announced. */
  heard(outcome: RewardOutcome, event: FinalEvent) {
    if (!this.#first(outcome)) return;
    this.#remember(outcome.record);
    this.emit(event, outcome);
  }

  #first({ intent, record }: RewardOutcome): boolean {
    if (this.#announced.has(intent.id) || (record && this.#announced.has(record.id))) return false;
    if (this.#announced.size >= ANNOUNCED_KEPT) this.#announced.clear();
    this.#announced.add(intent.id);
    if (record) this.#announced.add(record.id);
    return true;
  }

  #remember(record: RewardRecord | undefined) {
    if (!record || record.userId !== this.#userId) return;
    // The newest page only, as the relay serves it: the full history lives in the relay's ledger.
    this.#history = [record, ...this.#history.filter((r) => r.id !== record.id)].slice(0, HISTORY_KEPT);
    this.writes.write([[`history:${record.userId}`, this.#history]]);
  }
}

/** An intent rebuilt from a record heard on the event stream (sent by another device). */
export function intentOf(record: RewardRecord): RewardIntent {
  return { id: record.idempotencyKey ?? record.id, achievementId: record.achievementId, occurredAt: record.createdAt, userId: record.userId, attempts: 0, nextAttemptAt: 0 };
}
