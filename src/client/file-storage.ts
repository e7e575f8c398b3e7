import type { RewardStorage } from './storage.js';

/**
 * A JSON file for Node: every write replaces the file atomically (write a temp file, fsync,
 * rename), so a crash leaves the old queue or the new one, never half of one.
 */
export function fileStorage(path = '.rewardbus/client-queue.json'): RewardStorage {
  let map: Promise<Map<string, unknown>> | undefined;
  let writing: Promise<void> = Promise.resolve();
  // node:fs is loaded only when a Node game uses this store, so browser bundles never see it.
  const fs = () => import('node:fs/promises');

  const load = () =>
    (map ??= fs().then(async ({ readFile }) => {
      try {
        return new Map(Object.entries(JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>));
      } catch (err) {
        if ((err as { code?: string }).code === 'ENOENT') return new Map();
        throw err;
      }
    }));

  async function save(m: Map<string, unknown>) {
    const { open, rename, mkdir } = await fs();
    const { dirname } = await import('node:path');
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

  // Writes run one after another; each saves the map as it then is.
  const write = (change: (m: Map<string, unknown>) => void) =>
    (writing = writing.then(async () => {
      const m = await load();
      change(m);
      await save(m);
    }));

  const copy = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
  return {
    get: async (key) => copy((await load()).get(key)) as never,
    setMany: (list) => write((m) => list.forEach(([k, v]) => m.set(k, copy(v)))),
    delMany: (keys) => write((m) => keys.forEach((k) => m.delete(k))),
    entries: async (prefix) => [...(await load())].filter(([k]) => k.startsWith(prefix)).map(([k, v]) => [k, copy(v)] as [string, never]),
  };
}
