import { RelayProblem } from './problems.js';

/** The latest instant a JavaScript Date can hold (ms): past it, `toISOString()` throws. */
const MAX_DATE_MS = 8.64e15;
const FIELDS = ['created_at', 'createdAt', 'timestamp'] as const;

/**
 * When a webhook event says it happened (ms since 1970), from the first of `created_at`,
 * `createdAt`, `timestamp` it has: ISO 8601, or epoch seconds (10 digits or fewer) or ms, as a
 * number or a string of digits. No such field: undefined (no staleness check). A field that is
 * there but is not a real time (null, true, {}, 1e400, a date past year 275760, before 1970)
 * is a 400: an event must not skip the check by how it spells its date.
 */
export function webhookTimestamp(body: Record<string, unknown>): number | undefined {
  const field = FIELDS.find((f) => Object.hasOwn(body, f));
  if (!field) return undefined;
  const t = body[field];
  const ms =
    typeof t === 'number'
      ? Math.abs(t) < 1e12
        ? t * 1000
        : t
      : typeof t === 'string' && /^\d{1,13}$/.test(t)
        ? Number(t) * (t.length <= 10 ? 1000 : 1)
        : typeof t === 'string' && !/^\d+$/.test(t)
          ? Date.parse(t)
          : Number.NaN;
  if (!(Number.isFinite(ms) && ms >= 0 && ms <= MAX_DATE_MS)) throw new RelayProblem('bad_request', `The event's ${field} is not a time (ISO 8601, or epoch seconds or ms)`);
  return ms;
}
