import pino, { type Logger } from 'pino';

/** Paths whose values are never written, wherever they appear in a log line. */
export const REDACT_PATHS = ['apiKey', '*.apiKey', 'apikey', '*.apikey', 'headers.apikey', '*.headers.apikey', 'authorization', '*.authorization', 'token', '*.token', 'secret', '*.secret'];

export function createLogger(level = process.env.LOG_LEVEL ?? 'info', destination?: pino.DestinationStream): Logger {
  return pino({ level, base: { service: 'rewardbus-relay' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}
