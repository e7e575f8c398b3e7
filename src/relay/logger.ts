import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { REDACTED, scrub } from './scrub.js';

/** Paths whose values are never written, wherever they appear in a log line. */
export const REDACT_PATHS = ['apiKey', '*.apiKey', 'apikey', '*.apikey', 'headers.apikey', '*.headers.apikey', 'authorization', '*.authorization', 'token', '*.token', 'secret', '*.secret'];

/**
 * Where log lines go by default: readable lines in a terminal, JSON lines elsewhere (for log
 * collectors). JSON is written asynchronously and at once: never held back in a buffer, so a
 * payout's line appears as it happens, and never blocking the event loop on a slow reader.
 */
function defaultDestination(): pino.DestinationStream {
  if (process.stdout.isTTY) return pretty({ sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' });
  return pino.destination({ dest: 1, sync: false, minLength: 0 });
}

/**
 * The relay's logger. Known fields are redacted by name; `secrets` (the API key) are taken out
 * of every line wherever they appear, as are values shaped like credentials.
 */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info', destination: pino.DestinationStream = defaultDestination(), secrets: readonly string[] = []): Logger {
  return pino(
    {
      level,
      base: { service: 'rewardbus-relay' },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      hooks: { streamWrite: (line) => scrub(line, secrets) },
    },
    destination,
  );
}
