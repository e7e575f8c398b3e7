import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type * as fsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { fileStorage } from '../../src/client/node.js';
import { busesOnTestRelay, next } from '../helpers/client.js';

// A full disk: while `disk.full`, a file opened to be written (the queue's next copy) cannot be.
const disk = vi.hoisted(() => ({ full: false, wholly: false }));
vi.mock('node:fs/promises', async (original) => {
  const fs = await original<typeof fsPromises>();
  const enospc = (path: unknown) => Object.assign(new Error(`ENOSPC: no space left on device, write '${String(path)}'`), { code: 'ENOSPC' });
  const open = (async (path, flags, mode) => {
    if (disk.full && flags === 'w') throw enospc(path);
    const handle = await fs.open(path, flags, mode);
    // `wholly`: not even a few bytes fit; the lock file (its name an entry, no block) is made, its holder not written.
    if (disk.full && disk.wholly && flags === 'wx') handle.writeFile = () => Promise.reject(enospc(path));
    return handle;
  }) as typeof fs.open;
  return { ...fs, open, default: { ...fs, open } };
});

const dir = mkdtempSync(join(tmpdir(), 'rewardbus-full-disk-'));
let files = 0;
const { bus, start } = busesOnTestRelay(() => fileStorage(join(dir, `queue-${files++}.json`)));
afterEach(() => {
  disk.full = disk.wholly = false;
  rmSync(dir, { recursive: true, force: true });
});

it('sends an unlock from memory while the disk is full (a Node game server), and it is paid once', async () => {
  const relay = await start();
  const b = bus();
  await b.link('alice');
  // Nothing is being sent: the next send takes the lease anew.
  await b.flush();
  const errors: Error[] = [];
  b.on('error', (e) => errors.push(e));
  disk.full = true;
  const paid = next(b, 'reward:paid');
  const id = b.unlock('first-coin');
  // Before, the queue's lease (Node has no Web Locks: a key in the same file) could not be
  // written, and nothing was sent while the disk was full: a restart then lost the intent,
  // which only memory held.
  expect((await paid).intent.id).toBe(id);
  expect(relay.sandbox!.payments()).toHaveLength(1);
  expect(errors.some((e) => (e as { code?: string }).code === 'ENOSPC')).toBe(true);
});

it('leaves no lock behind when the disk had no room to write who held it: the next write, with room again, goes at once', async () => {
  const file = join(dir, 'wholly-full.json');
  const storage = fileStorage(file);
  disk.full = disk.wholly = true;
  await expect(storage.setMany([['intent:a', { id: 'a' }]])).rejects.toMatchObject({ code: 'ENOSPC' });
  // Before, the lock file stayed, empty: every writer (each process on the file) waited for it to
  // be 30 s old, and the queue's sends and outcomes with them.
  expect(existsSync(`${file}.lock`)).toBe(false);
  disk.full = disk.wholly = false;
  const started = Date.now();
  await storage.setMany([['intent:b', { id: 'b' }]]);
  expect(Date.now() - started).toBeLessThan(5_000);
  expect((await storage.entries('intent:')).map(([k]) => k).sort()).toEqual(['intent:a', 'intent:b']);
});
