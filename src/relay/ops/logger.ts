import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { REDACTED, scrub } from './scrub.js';

/**
 * Fields whose values are never written. Named paths only: a wildcard path made every line cost
 * five times as much, and the scrub below takes credentials out wherever they are nested.
 */
export const REDACT_PATHS = ['apiKey', 'apikey', 'authorization', 'token', 'secret', 'headers.apikey', 'headers.authorization', 'err.apiKey', 'err.token'];

/**
 * Where log lines go by default: readable lines in a terminal, JSON lines elsewhere (for log
 * collectors). JSON is written asynchronously, never blocking the event loop on a slow reader:
 * one write at a time, and the lines logged while it is under way go out together in the next.
 * Nothing waits for more lines to come (a minimum length would hold the last lines back for as
 * long as nothing else is logged: sonic-boom drops a flush asked for during a write).
 */
function defaultDestination(): pino.DestinationStream {
  if (process.stdout.isTTY) return pretty({ sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' });
  return pino.destination({ dest: 1, sync: false });
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
