/** A stream the keep-alive clock watches: when it last wrote, and how it says it is still there. */
export interface KeepAliveStream {
  lastWrite: number;
  keepAlive(): void;
}

/** Streams whose keep-alive falls due this close together are written in one tick. */
const TOGETHER_MS = 10;

/**
 * One clock for every open stream's keep-alive, in place of a timer each: a stream silent for
 * `periodMs` gets one. Streams are kept in the order they last wrote (a write moves one to the
 * end), so the first is always the next due and one timer, set for it, is enough.
 */
export function createKeepAlives(periodMs: number, now: () => number = () => performance.now()) {
  const byLastWrite = new Set<KeepAliveStream>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** While a tick writes, the writes it makes set no timer of their own: the tick sets one after. */
  let ticking = false;
  const touch = (s: KeepAliveStream, at: number) => {
    s.lastWrite = at;
    byLastWrite.delete(s);
    byLastWrite.add(s);
  };
  const arm = () => {
    if (timer !== undefined || ticking) return;
    const first = byLastWrite.values().next();
    if (first.done) return;
    timer = setTimeout(tick, Math.max(0, first.value.lastWrite + periodMs - now()));
    // The streams' sockets keep a Node process alive, not this clock.
    (timer as { unref?: () => void }).unref?.();
  };
  function tick() {
    timer = undefined;
    const t = now();
    ticking = true;
    try {
      for (const s of byLastWrite) {
        if (s.lastWrite + periodMs > t + TOGETHER_MS) break;
        // Moved to the end first: a stream that cannot write now (its client is behind) waits a period.
        touch(s, t);
        s.keepAlive();
      }
    } finally {
      ticking = false;
    }
    arm();
  }
  return {
    /** The stream wrote (or opened) now: its keep-alive is due a period from now. */
    wrote(s: KeepAliveStream) {
      touch(s, now());
      arm();
    },
    remove(s: KeepAliveStream) {
      byLastWrite.delete(s);
      if (!byLastWrite.size && timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
    },
    /** Streams watched (tests: a closed stream is no longer). */
    get size() {
      return byLastWrite.size;
    },
  };
}

export type KeepAlives = ReturnType<typeof createKeepAlives>;
