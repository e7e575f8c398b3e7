import { mapStorage, type RewardStorage } from './storage/index.js';

/**
 * A JSON file for Node: every write replaces the file atomically (write a temp file, fsync,
 * rename, fsync the folder), so a crash or a power cut leaves the old queue or the new one,
 * never half of one, and a write resolved is on disk.
 */
export function fileStorage(path = '.rewardbus/client-queue.json'): RewardStorage {
  // One store per file in a process: two, each with its own copy of the file in memory, would
  // each write theirs over the other's (two buses, or a bus made again while the last one wrote).
  let storage = opened.get(path);
  if (!storage) opened.set(path, (storage = openFile(path)));
  return storage;
}

/** The stores of this process, by path. */
const opened = new Map<string, RewardStorage>();

function openFile(path: string): RewardStorage {
  // node:fs is loaded only when a Node game uses this store, so browser bundles never see it.
  const fs = () => import('node:fs/promises');

  async function load() {
    const { readFile } = await fs();
    try {
      return new Map(Object.entries(JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>));
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return new Map<string, unknown>();
      throw err;
    }
  }

  async function save(m: Map<string, unknown>) {
    const [{ open, rename, mkdir }, { dirname }] = await Promise.all([fs(), import('node:path')]);
    const dir = dirname(path);
    // A folder made here is an entry in its parent: that entry must be on disk too.
    const made = await mkdir(dir, { recursive: true });
    if (made !== undefined) await syncFolder(dirname(made));
    const tmp = `${path}.${process.pid}.tmp`;
    const file = await open(tmp, 'w');
    try {
      await file.writeFile(JSON.stringify(Object.fromEntries(m)));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, path);
    // The rename is a change to the folder: until the folder is fsynced, a power cut can undo it
    // and the intents the new file holds with it.
    await syncFolder(dir);
  }

  async function syncFolder(dir: string) {
    // Windows opens no folder as a file, and its renames need no such step.
    if (process.platform === 'win32') return;
    const folder = await (await fs()).open(dir, 'r');
    try {
      await folder.sync();
    } catch (err) {
      // A file system that cannot fsync a folder (some network ones) has nothing more to give.
      if (!['EINVAL', 'ENOTSUP', 'EISDIR'].includes((err as { code?: string }).code ?? '')) throw err;
    } finally {
      await folder.close();
    }
  }

  return mapStorage(load, save);
}
