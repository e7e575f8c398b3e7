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
export function backoffDelay(attempt: number, retry?: RetryOptions, retryAfterMs?: number): number {
  const ceiling = Math.min(retry?.maxMs ?? 300_000, (retry?.baseMs ?? 1000) * 2 ** Math.min(attempt, 30));
  return Math.max(retryAfterMs ?? 0, ceiling / 2 + Math.random() * (ceiling / 2));
}
