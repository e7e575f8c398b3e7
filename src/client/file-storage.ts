import type * as Fs from 'node:fs/promises';
import { withFileLock } from './file-lock.js';
import type { RewardStorage } from './storage/index.js';

/**
 * A JSON file for Node, shared by every process that names it as tabs share IndexedDB: each
 * write takes the file's lock (file-lock.ts), reads the file as it is now, applies its own keys
 * and replaces the file atomically (write a temp file, fsync, rename, fsync the folder). So a
 * crash or a power cut leaves the old queue or the new one, never half of one, a write resolved
 * is on disk, and another writer's entries stay: two game servers started in one folder (the
 * default path is the same for both) each keep their intents. Reads see what other writers
 * wrote: the file is read again whenever it was replaced.
 */
export function fileStorage(path = '.rewardbus/client-queue.json'): RewardStorage {
  // One store per path in a process, so that its buses share one copy of the file in memory.
  let storage = opened.get(path);
  if (!storage) opened.set(path, (storage = { ...openFile(path), name: `file ${path}` }));
  return storage;
}

/** The stores of this process, by path. */
const opened = new Map<string, RewardStorage>();

type Entries = Map<string, unknown>;
/** One write's keys, values copied as it was asked for. */
interface Change {
  sets: Array<[string, unknown]>;
  dels: string[];
}

const copy = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
const codeOf = (err: unknown) => (err as { code?: string }).code;

function openFile(path: string): RewardStorage {
  // node:fs is loaded only when a Node game uses this store, so browser bundles never see it.
  let modules: Promise<{ fs: typeof Fs; dirname: (p: string) => string; host: string }> | undefined;
  const node = () =>
    (modules ??= Promise.all([import('node:fs/promises'), import('node:path'), import('node:os')]).then(([fs, { dirname }, { hostname }]) => ({
      fs,
      dirname,
      host: hostname(),
    })));
  /** The file as last read, and its stamp (inode, size, time: a rename into place changes the inode). */
  let seen: { stamp: string; entries: Entries } | undefined;
  /** Writes asked for and not yet on disk, in order: a failed one is written with the next. */
  let unsaved: Change[] = [];
  let writing: Promise<void> = Promise.resolve();

  /**
   * The file's entries now: read again only when another writer (or this one) replaced it.
   * `locked`: this process holds the file's lock (it is writing).
   */
  async function onDisk(locked = false): Promise<Entries> {
    const { fs, host } = await node();
    let file: Fs.FileHandle;
    try {
      file = await fs.open(path, 'r');
    } catch (err) {
      if (codeOf(err) !== 'ENOENT') throw err;
      if (seen?.stamp !== '') seen = { stamp: '', entries: new Map() };
      return seen.entries;
    }
    let stamp: string;
    let text: string;
    try {
      stamp = stampOf(await file.stat());
      if (seen?.stamp === stamp) return seen.entries;
      text = await file.readFile('utf8');
    } finally {
      await file.close();
    }
    const entries = queueOf(text);
    if (entries) {
      seen = { stamp, entries };
      return entries;
    }
    // No queue can be read from it whatever is done: set aside, it would refuse every intent from now on.
    await (locked ? setAside(stamp) : withFileLock(fs, path, host, () => setAside(stamp)));
    return onDisk(locked);
  }

  /** Moves the file that is no queue aside (kept for whoever can mend it), unless a writer replaced it meanwhile. */
  async function setAside(stamp: string) {
    const { fs, dirname } = await node();
    const now = await fs.stat(path).catch(() => undefined);
    if (!now || stampOf(now) !== stamp) return;
    const aside = `${path}.corrupt-${Date.now()}`;
    await fs.rename(path, aside);
    await syncFolder(fs, dirname(path));
    console.warn(`rewardbus: ${path} is no queue file (not a JSON object): kept as ${aside}; a new queue starts in ${path}`);
  }

  /** What a read sees: the file, and the writes of this process not yet on disk. */
  async function view(): Promise<Entries> {
    const entries = await onDisk();
    if (!unsaved.length) return entries;
    const ahead = new Map(entries);
    for (const c of unsaved) apply(ahead, c);
    return ahead;
  }

  function write(change: Change): Promise<void> {
    unsaved.push(change);
    const done = writing.then(async () => {
      // Written already, with an earlier write of this process.
      if (!unsaved.length) return;
      const { fs, dirname, host } = await node();
      const dir = dirname(path);
      // A folder made here is an entry in its parent: that entry must be on disk too.
      const made = await fs.mkdir(dir, { recursive: true });
      if (made !== undefined) await syncFolder(fs, dirname(made));
      await withFileLock(fs, path, host, async () => {
        const entries = new Map(await onDisk(true));
        const changes = unsaved.slice();
        for (const c of changes) apply(entries, c);
        await replace(fs, entries);
        // The lock is held: the file on disk is the one just written.
        seen = { stamp: stampOf(await fs.stat(path)), entries };
        unsaved = unsaved.slice(changes.length);
      });
      await syncFolder(fs, dir);
    });
    // A failed write fails its own promise only: its change stays unsaved, for the next write.
    writing = done.catch(() => undefined);
    return done;
  }

  async function replace(fs: typeof Fs, entries: Entries) {
    const tmp = `${path}.${process.pid}.tmp`;
    const file = await fs.open(tmp, 'w');
    try {
      await file.writeFile(JSON.stringify(Object.fromEntries(entries)));
      await file.sync();
    } finally {
      await file.close();
    }
    await fs.rename(tmp, path);
  }

  return {
    get: async (key) => copy((await view()).get(key)) as never,
    setMany: (list) => write({ sets: list.map(([k, v]) => [k, copy(v)]), dels: [] }),
    delMany: (keys) => write({ sets: [], dels: [...keys] }),
    // A turn's sets and deletions in one change, saved once: one file written, not two.
    write: (sets, dels) => write({ sets: sets.map(([k, v]) => [k, copy(v)]), dels: [...dels] }),
    entries: async (prefix) => [...(await view())].filter(([k]) => k.startsWith(prefix)).map(([k, v]) => [k, copy(v)] as [string, never]),
  };
}

/** The entries a queue file holds; undefined if it holds none (not JSON, or not an object of them). */
function queueOf(text: string): Entries | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? new Map(Object.entries(parsed)) : undefined;
}

function apply(entries: Entries, { sets, dels }: Change) {
  for (const [k, v] of sets) entries.set(k, v);
  for (const k of dels) entries.delete(k);
}

const stampOf = (s: { ino: number; size: number; mtimeMs: number }) => `${s.ino}:${s.size}:${s.mtimeMs}`;

/**
 * Makes a rename in `dir` durable: until the folder is fsynced, a power cut can undo the rename,
 * and the intents the new file holds with it.
 */
async function syncFolder(fs: typeof Fs, dir: string) {
  // Windows opens no folder as a file, and its renames need no such step.
  if (process.platform === 'win32') return;
  const folder = await fs.open(dir, 'r');
  try {
    await folder.sync();
  } catch (err) {
    // A file system that cannot fsync a folder (some network ones) has nothing more to give.
    if (!['EINVAL', 'ENOTSUP', 'EISDIR'].includes(codeOf(err) ?? '')) throw err;
  } finally {
    await folder.close();
  }
}
