import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import sonicBoom from 'sonic-boom';
import { REDACTED, scrub } from '../scrub.js';

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
 * What is left at exit is written then. A reader gone (EPIPE) ends logging, never the relay: the
 * exit flush of pino's own destination (sonic-boom 4) retried a broken pipe every 100 ms forever,
 * and the relay never exited.
 */
// CommonJS: its module.exports is the class (its types say `export default`).
const SonicBoom = sonicBoom as unknown as typeof sonicBoom.SonicBoom;

function defaultDestination(): pino.DestinationStream {
  if (process.stdout.isTTY) return pretty({ sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' });
  const out = new SonicBoom({ fd: 1, sync: false });
  let gone = false;
  out.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    gone = true;
  });
  process.once('exit', () => {
    try {
      if (!gone) out.flushSync();
    } catch {
      // The reader is gone: the lines left go with it.
    }
  });
  return { write: (line: string) => void (gone || out.write(line)) };
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
