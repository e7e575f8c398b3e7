import type { RewardRecord } from '../../wire/relay-api.js';
import type { RelayAnswer } from '../delivery/index.js';
import { eventOf, type FinalEvent } from '../events.js';

/**
 * What the relay's answer to one intent's claim means for it: out of reach; final (the intent
 * leaves the queue); send again later (`retryAfterMs`: as the relay asked; `expire`: the player's
 * token first); or too early (not played long enough: nothing was recorded).
 */
export type Verdict =
  | { kind: 'unreachable' }
  | { kind: 'final'; event: FinalEvent; record?: RewardRecord; reason: string | undefined }
  | { kind: 'retry'; retryAfterMs?: number; expire?: true }
  | { kind: 'too_early'; retryAt: string | undefined; retryAfterMs: number | undefined };

export function verdictOf(a: RelayAnswer<RewardRecord>): Verdict {
  if ('unreachable' in a) return { kind: 'unreachable' };
  if (a.ok) {
    const event = eventOf(a.body.status);
    return event ? { kind: 'final', event, record: a.body, reason: a.body.reason } : { kind: 'retry' };
  }
  // The token lapsed or the relay's secret changed: link again, then send again.
  if (a.status === 401) return { kind: 'retry', expire: true };
  if (a.status === 425) return { kind: 'too_early', retryAt: a.problem?.retryAt, retryAfterMs: a.retryAfterMs };
  if (a.status === 408 || a.status === 409 || a.status === 429 || a.status >= 500) return { kind: 'retry', retryAfterMs: a.retryAfterMs };
  return { kind: 'final', event: 'reward:rejected', reason: a.problem?.code ?? `http_${a.status}` };
}
