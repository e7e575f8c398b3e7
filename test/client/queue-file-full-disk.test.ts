import { mkdtempSync, rmSync } from 'node:fs';
import type * as fsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { fileStorage } from '../../src/client/node.js';
import { busesOnTestRelay, next } from '../helpers/client.js';

// A full disk: while `disk.full`, a file opened to be written (the queue's next copy) cannot be.
const disk = vi.hoisted(() => ({ full: false }));
vi.mock('node:fs/promises', async (original) => {
  const fs = await original<typeof fsPromises>();
  const open = (async (path, flags, mode) => {
    if (disk.full && flags === 'w') throw Object.assign(new Error(`ENOSPC: no space left on device, open '${String(path)}'`), { code: 'ENOSPC' });
    return fs.open(path, flags, mode);
  }) as typeof fs.open;
  return { ...fs, open, default: { ...fs, open } };
});

const dir = mkdtempSync(join(tmpdir(), 'rewardbus-full-disk-'));
let files = 0;
const { bus, start } = busesOnTestRelay(() => fileStorage(join(dir, `queue-${files++}.json`)));
afterEach(() => {
  disk.full = false;
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
