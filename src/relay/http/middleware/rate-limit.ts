/**
 * Fixed one-minute windows per key (an IP, a userId). In memory: each relay instance
 * limits on its own, which is enough to stop one client from hammering it.
 */
export function createRateLimiter(perMinute: number, windowMs = 60_000) {
  const windows = new Map<string, { start: number; count: number }>();
  let sweptAt = 0;
  /** 0 when allowed; otherwise the seconds to wait. */
  return function take(key: string, now = Date.now()): number {
    if (perMinute <= 0) return 0;
    if (now - sweptAt > windowMs) {
      for (const [k, w] of windows) if (now - w.start >= windowMs) windows.delete(k);
      sweptAt = now;
    }
    let w = windows.get(key);
    if (!w || now - w.start >= windowMs) windows.set(key, (w = { start: now, count: 0 }));
    if (++w.count <= perMinute) return 0;
    return Math.max(1, Math.ceil((w.start + windowMs - now) / 1000));
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
