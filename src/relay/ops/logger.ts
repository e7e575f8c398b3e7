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
 * collectors). JSON is written asynchronously, never blocking the event loop on a slow reader,
 * and at the end of the event loop's turn: lines logged together go out in one write, and none
 * waits longer than that turn (those pending at exit are written then).
 */
function defaultDestination(): pino.DestinationStream {
  if (process.stdout.isTTY) return pretty({ sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' });
  const out = pino.destination({ dest: 1, sync: false, minLength: 8192 });
  let flushing = false;
  let closed = false;
  out.once('close', () => (closed = true));
  const flush = () => {
    flushing = false;
    if (!closed) out.flush();
  };
  return {
    write(line: string) {
      out.write(line);
      if (!flushing) {
        flushing = true;
        setImmediate(flush);
      }
    },
  };
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
