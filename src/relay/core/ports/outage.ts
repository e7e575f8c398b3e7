/**
 * Whether an error means the store is out of reach or overloaded (a database restarted, frozen or
 * stopped, a timeout, a full disk) rather than a bug: such a request is answered 503 with
 * Retry-After, never 500, and the client tries again with the same key.
 */
/** node-postgres's words for a pool or a connection that gave up, and the SQLite store's when it is closed. */
const GAVE_UP = new RegExp(
  [
    'Connection terminated',
    'timeout exceeded when trying to connect',
    'Query read timeout',
    'Client has encountered a connection error',
    'the SQLite store is closed',
    'Cannot use a pool after calling end',
  ].join('|'),
  'i',
);

export function isStoreOutage(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    // PostgreSQL: connection exceptions (08), operator intervention (57: shutdown, statement
    // timeout), insufficient resources (53), lock not available (55P03), and the SQLite codes
    // for a busy, full or failing file.
    if (/^(08|57|53)/.test(code) || code === '55P03' || code === '40001' || code === '40P01') return true;
    if (/^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY)/.test(code)) return true;
    if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH'].includes(code)) return true;
  }
  if (typeof message === 'string') {
    // node-postgres's own words for a pool or a connection that gave up.
    return GAVE_UP.test(message);
  }
  return false;
}
