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
 * collectors). JSON is written asynchronously, never blocking the event loop on a slow reader.
 * A warning or an error goes out at the end of the event loop's turn, with every line before it;
 * info and below wait up to QUIET_WAIT_MS to go out together (a write per turn cost the relay
 * about as much as the line's own making: one settlement line per payout, one turn or so per
 * payout under load). Lines pending at exit are written then.
 */
function defaultDestination(): pino.DestinationStream {
  if (process.stdout.isTTY) return pretty({ sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' });
  const out = pino.destination({ dest: 1, sync: false, minLength: 8192 });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let turnEnd = false;
  let closed = false;
  out.once('close', () => (closed = true));
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    turnEnd = false;
    if (!closed) out.flush();
  };
  return {
    write(line: string) {
      out.write(line);
      if (!QUIET.test(line)) {
        if (!turnEnd) {
          turnEnd = true;
          setImmediate(flush);
        }
      } else if (!timer) {
        timer = setTimeout(flush, QUIET_WAIT_MS);
        // The exit writes what is pending: a quiet line does not hold the process.
        timer.unref();
      }
    },
  };
}

/** pino's lines start with their level: trace (10), debug (20) and info (30) may wait a little. */
const QUIET = /^\{"level":[123]0,/;
const QUIET_WAIT_MS = 10;

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
