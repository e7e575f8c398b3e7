import { DEFAULTS } from '../../settings/schema.js';
import { RelayProblem } from '../problems.js';

/** How long a request body may take to arrive, from the first read. */
export const DEFAULT_BODY_TIMEOUT_MS = DEFAULTS.bodyTimeoutMs;

/**
 * Reads a body within `ms`: a client that trickles its body (or stops sending) gets
 * `408 request_timeout` with `Connection: close`, so Node drops the socket instead of holding
 * it for its own 300 s request timeout. A read that fails because the client hung up is
 * `client_closed` (499): not the relay's failure, nothing to log as an error.
 */
export async function readWithin<T>(read: () => Promise<T>, ms = DEFAULT_BODY_TIMEOUT_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const reading = read().catch((err: unknown) => {
    throw err instanceof RelayProblem ? err : new RelayProblem('client_closed', 'The client closed the connection before its body arrived');
  });
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RelayProblem('request_timeout', `The body did not arrive within ${ms / 1000} s`, { Connection: 'close' })), ms);
  });
  // The losing read ends when the socket is closed: its rejection is no one's.
  reading.catch(() => undefined);
  try {
    return await Promise.race([reading, late]);
  } finally {
    clearTimeout(timer);
  }
}
