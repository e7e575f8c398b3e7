import { mapStorage, type RewardStorage } from './storage/index.js';

/**
 * A JSON file for Node: every write replaces the file atomically (write a temp file, fsync,
 * rename), so a crash leaves the old queue or the new one, never half of one.
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
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.tmp`;
    const file = await open(tmp, 'w');
    try {
      await file.writeFile(JSON.stringify(Object.fromEntries(m)));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, path);
  }

  return mapStorage(load, save);
}
