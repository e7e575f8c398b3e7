/** A 425 is never asked again sooner than this, whatever the clocks say. */
const MIN_TOO_EARLY_MS = 250;

/**
 * When to claim again after a 425 (`too_early`: not played long enough yet; loaded on the first
 * one). The relay's `retryAt` is on its clock and its Retry-After (whole seconds, rounded up) on
 * none: `retryAt` is read within the second Retry-After allows, so a wrong clock here neither
 * sends it early (another 425, at most once a second) nor holds it back. With neither, `backoffMs`.
 */
export function tooEarlyUntil(now: number, retryAt: string | undefined, retryAfterMs: number | undefined, backoffMs: number): number {
  const byClock = retryAt ? Date.parse(retryAt) - now : Number.NaN;
  let wait = retryAfterMs === undefined ? byClock : Number.isNaN(byClock) ? retryAfterMs : Math.min(retryAfterMs, Math.max(retryAfterMs - 1000, byClock));
  if (Number.isNaN(wait)) wait = backoffMs;
  return now + Math.max(wait, MIN_TOO_EARLY_MS);
}
