// How the relay says no, and the headers of its idempotent requests.

/** RFC 9457 problem details, served as `application/problem+json`. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  /** Stable, machine-readable; see docs/relay-api.md. */
  code: string;
  detail?: string;
  /** `too_early` (425): when the claim will be due, ISO 8601 (also as `Retry-After`, in seconds). */
  retryAt?: string;
}

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
