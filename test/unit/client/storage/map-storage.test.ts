import { describe, expect, it, vi } from 'vitest';
import { createWriteBatch, mapStorage } from '../../../../src/client/storage/index.js';

describe('mapStorage', () => {
  it("saves a turn's sets and deletions once (fileStorage writes its file once, not once for each)", async () => {
    const save = vi.fn(async (_: Map<string, unknown>) => undefined);
    const storage = mapStorage(async () => new Map<string, unknown>([['intent:a', { n: 1 }]]), save);
    const writes = createWriteBatch(storage, (err) => {
      throw err;
    });
    writes.set('intent:a', undefined);
    writes.set('reward:u:a', { n: 2 });
    await writes.written;
    expect(save).toHaveBeenCalledOnce();
    expect([...save.mock.calls[0]![0]]).toEqual([['reward:u:a', { n: 2 }]]);
    expect(await storage.entries('')).toEqual([['reward:u:a', { n: 2 }]]);
  });
});
