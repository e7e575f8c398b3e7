import type { RelayAnswer } from './delivery/index.js';

/** A failed link(), with the relay's problem code (`unknown_gamertag`, `relay_unreachable`, …). */
export class RewardBusError extends Error {
  constructor(
    readonly code: string,
    message = code,
  ) {
    super(message);
  }
}

/** The body of a successful answer; otherwise a RewardBusError with the relay's problem code. */
export function answer<T>(a: RelayAnswer<T>): T {
  if ('unreachable' in a) throw new RewardBusError('relay_unreachable', a.foreign ? `The relay cannot be reached: ${a.foreign.why}` : 'The relay cannot be reached');
  if (!a.ok) throw new RewardBusError(a.problem?.code ?? `http_${a.status}`, a.problem?.detail ?? a.problem?.title);
  return a.body;
}
