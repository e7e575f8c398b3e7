import { mkdtempSync, readFileSync } from 'node:fs';
import type * as fsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { fileStorage } from '../../src/client/node.js';

// What the store fsyncs, by path: node:fs/promises as it is, each handle's sync() noted.
const synced: string[] = [];
vi.mock('node:fs/promises', async (original) => {
  const fs = await original<typeof fsPromises>();
  const open = async (...args: Parameters<typeof fs.open>) => {
    const handle = await fs.open(...args);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      await sync();
      synced.push(String(args[0]));
    };
    return handle;
  };
  return { ...fs, open, default: { ...fs, open } };
});

// A power cut can lose a rename that only sits in the folder's cache: the intent the renamed
// file held is lost with it. Durable means the file's data and the folder's entry both on disk.
it('fsyncs the new file before its rename and the folder after it, before a write resolves', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'rewardbus-fsync-')), 'queue.json');
  const storage = fileStorage(file);
  await storage.setMany([['intent:a', { id: 'a' }]]);
  expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ 'intent:a': { id: 'a' } });
  expect(synced.some((p) => p.startsWith(`${file}.`))).toBe(true);
  expect(synced).toContain(dirname(file));
  expect(synced.indexOf(dirname(file))).toBeGreaterThan(synced.findIndex((p) => p.startsWith(`${file}.`)));
});

it('fsyncs the folders it made for the file in their parent too', async () => {
  const root = mkdtempSync(join(tmpdir(), 'rewardbus-fsync-'));
  synced.length = 0;
  await fileStorage(join(root, '.rewardbus', 'queue.json')).setMany([['intent:a', { id: 'a' }]]);
  expect(synced).toEqual(expect.arrayContaining([root, join(root, '.rewardbus')]));
});
