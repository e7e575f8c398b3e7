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

describe('mapStorage after a failed save', () => {
  it('saves the next writes: one failed save (a full disk, a file busy for a moment) does not leave every later intent unsaved', async () => {
    let failures = 1;
    const saved: Array<string[]> = [];
    const save = async (m: Map<string, unknown>) => {
      if (failures-- > 0) throw new Error('EBUSY');
      saved.push([...m.keys()]);
    };
    const storage = mapStorage(async () => new Map<string, unknown>(), save);
    await expect(storage.setMany([['intent:a', { n: 1 }]])).rejects.toThrow('EBUSY');
    await storage.setMany([['intent:b', { n: 2 }]]);
    // The failed write's change is saved too, with the next one: nothing in memory is left unsaved.
    expect(saved).toEqual([['intent:a', 'intent:b']]);
  });
});
