import { mapStorage, type RewardStorage } from './storage/index.js';

/**
 * A JSON file for Node: every write replaces the file atomically (write a temp file, fsync,
 * rename), so a crash leaves the old queue or the new one, never half of one.
 */
export function fileStorage(path = '.rewardbus/client-queue.json'): RewardStorage {
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
