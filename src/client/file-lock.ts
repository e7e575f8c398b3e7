import type * as Fs from 'node:fs/promises';

/** A lock held longer than this is taken over, whoever holds it: a write holds it for milliseconds. */
export const STALE_LOCK_MS = 30_000;

interface Holder {
  pid: number;
  host: string;
  token: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const codeOf = (err: unknown) => (err as { code?: string }).code;

/**
 * Runs `work` holding `<file>.lock`, the lock of every writer of `file` (each process, each store
 * in one): the lock file is created exclusively, says who holds it, and is removed after. A holder
 * whose process is gone (on this host) loses it to the next writer at once; any holder past
 * STALE_LOCK_MS does too. `fs` is passed in: the client loads node:fs only when a file is used.
 */
export async function withFileLock<T>(fs: typeof Fs, file: string, host: string, work: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  const me = JSON.stringify({ pid: process.pid, host, token: Math.random().toString(36).slice(2) } satisfies Holder);
  for (let wait = 2; !(await take(fs, lock, me)); wait = Math.min(wait * 2, 50)) {
    if (!(await clearedStale(fs, lock, host))) await sleep(wait * (0.5 + Math.random()));
  }
  try {
    return await work();
  } finally {
    // Only its own: a lock taken over meanwhile is the new holder's.
    if ((await fs.readFile(lock, 'utf8').catch(() => undefined)) === me) await fs.unlink(lock).catch(() => undefined);
  }
}

async function take(fs: typeof Fs, lock: string, me: string): Promise<boolean> {
  let handle: Fs.FileHandle;
  try {
    handle = await fs.open(lock, 'wx');
  } catch (err) {
    if (codeOf(err) === 'EEXIST') return false;
    throw err;
  }
  try {
    await handle.writeFile(me);
  } catch (err) {
    // No room to say who holds it (a full disk): left empty, every writer would wait out STALE_LOCK_MS.
    await handle.close();
    await fs.unlink(lock).catch(() => undefined);
    throw err;
  }
  await handle.close();
  return true;
}

/** Removes the lock if its holder is gone or held it too long: true when it is worth trying again at once. */
async function clearedStale(fs: typeof Fs, lock: string, host: string): Promise<boolean> {
  let text: string;
  let since: number;
  try {
    [text, since] = await Promise.all([fs.readFile(lock, 'utf8'), fs.stat(lock).then((s) => s.mtimeMs)]);
  } catch (err) {
    if (codeOf(err) === 'ENOENT') return true;
    throw err;
  }
  // Empty while its holder is still writing who it is: judged by its age alone.
  const holder = parseHolder(text);
  const gone = holder !== undefined && holder.host === host && !alive(holder.pid);
  if (!gone && Date.now() - since < STALE_LOCK_MS) return false;
  // The lock judged, not one another writer took since.
  if ((await fs.readFile(lock, 'utf8').catch(() => undefined)) !== text) return true;
  await fs.unlink(lock).catch((err: unknown) => {
    if (codeOf(err) !== 'ENOENT') throw err;
  });
  return true;
}

function parseHolder(text: string): Holder | undefined {
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    return typeof h.pid === 'number' && typeof h.host === 'string' ? (h as Holder) : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return codeOf(err) === 'EPERM';
  }
}
