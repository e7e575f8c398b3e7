/**
 * How far the relay's clock is ahead of this device's (ms; negative: behind), as the relay's
 * answers bound it. The earning rules count in the relay's time (a cooldown from its record's
 * createdAt, a daily repeat by its UTC day): judged by a device clock that is behind, unlock()
 * would skip what the relay pays. Bounded by what the relay stamped while a request was under
 * way: the Date header, where it can be read (a page on another origin, by a relay before 0.3,
 * cannot: those did not expose it), and the record of a claim it created for the request.
 */
export class RelayClock {
  /** At most this much ahead; undefined until an answer bounds it. */
  most: number | undefined;
  /** At least this much ahead. */
  #least = Number.NEGATIVE_INFINITY;

  /**
   * The relay's clock said `at` (ms, rounded down to `resolution`) for a request sent and
   * answered at these times of this device's.
   */
  read(at: number, sent: number, received: number, resolution = 0) {
    if (!Number.isFinite(at)) return;
    const least = at - received;
    const most = at + resolution - sent;
    // Out of what was known: this device's clock was set since, and the old bounds say nothing.
    if (this.most === undefined || least > this.most || most < this.#least) {
      this.#least = least;
      this.most = most;
    } else {
      this.#least = Math.max(this.#least, least);
      this.most = Math.min(this.most, most);
    }
  }
}
