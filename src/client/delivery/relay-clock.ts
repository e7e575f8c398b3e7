/** Wall time less monotonic time moving by less than this is the two clocks' own jitter and drift. */
const SET_BACK_MS = 1000;

/** This device's wall clock less its monotonic one (ms): it moves when the wall clock is set. */
const wallLessMonotonic = () => Date.now() - performance.now();

/**
 * How far the relay's clock is ahead of this device's (ms; negative: behind), as the relay's
 * answers bound it. The earning rules count in the relay's time (a cooldown from its record's
 * createdAt, a daily repeat by its UTC day): judged by a device clock that is behind, unlock()
 * would skip what the relay pays. Bounded by what the relay stamped while a request was under
 * way: the Date header, where it can be read (a page on another origin, by a relay before 0.3,
 * cannot: those did not expose it), and the record of a claim it created for the request.
 *
 * Kept against this device's wall clock, which may be set back while the page lives: the relay's
 * time then runs on from the last answer by the monotonic clock (`performance.now()`), and the
 * bounds move forward by as much. They do not move back when the wall clock gets ahead of the
 * monotonic one (set forward, or a monotonic clock that stood still while the device slept, as
 * some browsers' does): a set-back after that moves them forward in full, so the relay's time
 * errs late, where unlock() sends and the relay decides, never skips.
 */
export class RelayClock {
  #most: number | undefined;
  /** At least this much ahead. */
  #least = Number.NEGATIVE_INFINITY;
  /** wallLessMonotonic() when the bounds were read, or last moved forward. */
  #anchor = wallLessMonotonic();

  /** At most this much ahead; undefined until an answer bounds it. */
  get most(): number | undefined {
    this.#follow();
    return this.#most;
  }

  /**
   * The relay's clock said `at` (ms, rounded down to `resolution`) for a request sent and
   * answered at these times of this device's.
   */
  read(at: number, sent: number, received: number, resolution = 0) {
    if (!Number.isFinite(at)) return;
    this.#follow();
    // The bounds are in the wall clock's time as it is now.
    this.#anchor = wallLessMonotonic();
    const least = at - received;
    const most = at + resolution - sent;
    // Out of what was known: this device's clock was set since, and the old bounds say nothing.
    if (this.#most === undefined || least > this.#most || most < this.#least) {
      this.#least = least;
      this.#most = most;
    } else {
      this.#least = Math.max(this.#least, least);
      this.#most = Math.min(this.#most, most);
    }
  }

  /**
   * Moves the bounds forward by as much as the wall clock was set back since they were read (or
   * last moved). A wall clock that got ahead (set forward, or a sleep the monotonic clock did not
   * count: the two look alike) moves the anchor, not the bounds, so a set-back after it is followed
   * in full: after a set-forward and back, the bound is too late until the next answer, and
   * unlock() sends what the relay then decides, never skips.
   */
  #follow() {
    const anchor = wallLessMonotonic();
    const back = this.#anchor - anchor;
    if (this.#most === undefined || (back <= SET_BACK_MS && back >= -SET_BACK_MS)) return;
    this.#anchor = anchor;
    if (back < 0) return;
    this.#most += back;
    this.#least += back;
  }
}
