import pino, { type Logger } from 'pino';

/** Paths whose values are never written, wherever they appear in a log line. */
export const REDACT_PATHS = ['apiKey', '*.apiKey', 'apikey', '*.apikey', 'headers.apikey', '*.headers.apikey', 'authorization', '*.authorization', 'token', '*.token', 'secret', '*.secret'];

/**
 * JSON lines on stdout, buffered: a payout logs a line, and one write per line would cost more
 * than the payout's own ledger commit. Flushed on exit.
 */
export function createLogger(
  level = process.env.LOG_LEVEL ?? 'info',
  destination: pino.DestinationStream = pino.destination({ dest: 1, sync: false, minLength: 4096 }),
): Logger {
  return pino({ level, base: { service: 'rewardbus-relay' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}
