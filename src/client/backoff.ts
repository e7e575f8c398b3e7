export interface RetryOptions {
  /** First delay. Default 1 s. */
  baseMs?: number;
  /** Longest delay. Default 5 min. */
  maxMs?: number;
}

/**
 * Exponential backoff with full jitter, so a thousand games coming back online do not retry in
 * step; never sooner than the relay's Retry-After.
 */
export function backoffDelay(attempt: number, { baseMs = 1000, maxMs = 300_000 }: RetryOptions = {}, retryAfterMs = 0): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.max(retryAfterMs, ceiling / 2 + Math.random() * (ceiling / 2));
}
