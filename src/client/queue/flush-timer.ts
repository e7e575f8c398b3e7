/**
 * When the queue flushes next, on one timer: at once (after the game loop's turn), or at the
 * earliest time an intent is due. Never keeps a Node process alive.
 */
export class FlushTimer {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;
  /** The timer is a flush at once. */
  #soon = false;
  #stopped = false;

  constructor(private readonly flush: () => void) {}

  schedule(ms: number) {
    // unlock() calls this every time: a flush already due at once covers it, without a look at the clock.
    if (this.#stopped || this.#soon) return;
    if (ms === 0) {
      // At once: after the game loop's turn (its unlocks go in one write and one send), not a timer
      // later, which waits behind the frame being drawn.
      this.#soon = true;
      queueMicrotask(() => {
        this.#soon = false;
        this.flush();
      });
      return;
    }
    const at = Date.now() + ms;
    // Keep an earlier timer rather than remaking it.
    if (at >= this.#timerAt) return;
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => {
      this.#timerAt = Infinity;
      this.flush();
    }, ms);
    // In Node, a pending retry must not keep the process alive.
    (this.#timer as { unref?: () => void }).unref?.();
  }

  stop() {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }
}
