import type { RewardStorage } from '../storage/index.js';

/**
 * One tab of the game sends at a time. With Web Locks and a way to ask for the lock (`knock`,
 * the tab channel), a tab keeps the lock between its sends, so the next unlock goes out without
 * asking the browser for it again: it lets go when another tab knocks, when it is hidden, and
 * when it stops. Otherwise (no Web Locks: a lease kept in the shared storage, tab-lease.ts,
 * loaded only then; or no channel to knock on) it holds the lock for one run at a time.
 * The relay's idempotency keys make a rare overlap harmless; this keeps it rare.
 */
export class TabLock {
  /** Lets go of the Web Lock held between runs; undefined while not held. */
  #release: (() => void) | undefined;
  #acquiring: Promise<void> | undefined;
  #running = 0;
  #last: Promise<void> = Promise.resolve();
  /** Another tab knocked (or this one was hidden or stopped): let go after the run in progress. */
  #yielding = false;
  #stopped = false;
  readonly #onHidden = () => {
    if (document.visibilityState === 'hidden') this.yield();
  };

  constructor(
    private readonly name: string,
    private readonly storage: RewardStorage,
    private readonly owner: string,
    /** Asks the tab holding the lock to let go of it; undefined where other tabs cannot hear. */
    private readonly knock: (() => void) | undefined,
  ) {}

  /**
   * Runs `work` holding the lock. `fresh`: the lock was just taken, so other tabs may have sent,
   * queued or deleted intents since this one last held it; while it keeps it, none can.
   */
  async run<T>(work: (fresh: boolean) => Promise<T>): Promise<T> {
    // One run at a time in this tab too: each waits for the one before it.
    const before = this.#last;
    let done!: () => void;
    this.#last = new Promise<void>((r) => (done = r));
    await before;
    try {
      return await this.#runNow(work);
    } finally {
      done();
    }
  }

  async #runNow<T>(work: (fresh: boolean) => Promise<T>): Promise<T> {
    const locks = typeof navigator === 'undefined' ? undefined : (navigator as Navigator & { locks?: LockManager }).locks;
    if (!locks?.request) return (await import('./tab-lease.js')).withTabLease(this.storage, this.owner, () => work(true));
    if (!this.knock) return locks.request(this.name, () => work(true)) as Promise<T>;
    // Counted from here: a knock while the lock is being taken lets go after this run, not before it.
    this.#running++;
    try {
      const fresh = !this.#release;
      if (fresh) await (this.#acquiring ??= this.#acquire(locks).finally(() => (this.#acquiring = undefined)));
      return await work(fresh);
    } finally {
      if (--this.#running === 0 && (this.#yielding || this.#stopped)) this.#letGo();
    }
  }

  /** Another tab wants to send (or this one went out of sight): let go now, or when the run in progress ends. */
  yield() {
    if (this.#release && !this.#running) this.#letGo();
    // Heard while waiting for the lock too: the knock may be for this tab, next in line.
    else if (this.#release || this.#acquiring) this.#yielding = true;
  }

  stop() {
    this.#stopped = true;
    this.yield();
  }

  #acquire(locks: LockManager): Promise<void> {
    this.knock!();
    return new Promise<void>((granted) => {
      locks
        .request(this.name, () => {
          // Held until let go: the promise this callback returns keeps the lock.
          const held = new Promise<void>((release) => (this.#release = release));
          // A tab out of sight sends what it has, and lets go.
          if (typeof document !== 'undefined') {
            document.addEventListener('visibilitychange', this.#onHidden);
            if (document.visibilityState === 'hidden') this.#yielding = true;
          }
          granted();
          return held;
        })
        .catch(() => undefined);
    });
  }

  #letGo() {
    this.#yielding = false;
    const release = this.#release;
    this.#release = undefined;
    if (typeof document !== 'undefined') document.removeEventListener('visibilitychange', this.#onHidden);
    release?.();
  }
}
