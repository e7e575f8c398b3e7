import { describe, expect, it } from 'vitest';
import { allEnded, grouped } from '../../../src/relay/store/postgres/group.js';

describe('grouped calls (store/postgres/group.ts)', () => {
  it('keeps a later call on the same key for the next group, and starts that group only once the calls a group made again alone have ended', async () => {
    const log: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // The first group cannot be made together: its calls are made again alone (here, after `held`).
    const call = grouped<string, string>(
      async (items) => {
        log.push(`group ${items.join(' ')}`);
        if (!items.includes('a1')) return items;
        return allEnded(
          items.map(async (item) => {
            await held;
            log.push(`alone ${item}`);
            return item;
          }),
        );
      },
      { keys: (item) => [item[0]!] },
    );
    const answers = Promise.all([call('a1'), call('b1'), call('a2')]);
    await expect.poll(() => log).toEqual(['group a1 b1']);
    release();
    expect(await answers).toEqual(['a1', 'b1', 'a2']);
    expect(log).toEqual(['group a1 b1', 'alone a1', 'alone b1', 'group a2']);
  });

  it('puts a call its group hands on to the next (busy) before a later call on its key', async () => {
    const log: string[] = [];
    let handedOn = false;
    const call: (item: string, again?: boolean) => Promise<string> = grouped<string, string>(
      async (items) => {
        log.push(`group ${items.join(' ')}`);
        return items.map((item) => {
          if (item !== 'a1' || handedOn) return item;
          // Busy the first time: handed on to the next group.
          handedOn = true;
          return call(item, true);
        });
      },
      { keys: (item) => [item[0]!] },
    );
    expect(await Promise.all([call('a1'), call('a2')])).toEqual(['a1', 'a2']);
    expect(log).toEqual(['group a1', 'group a1', 'group a2']);
  });

  it("answers each call made alone with its own outcome: one call's failure is not its group's", async () => {
    const call = grouped<string, string>(async (items) =>
      allEnded(items.map(async (item) => (item === 'bad' ? Promise.reject(new Error('refused')) : item))),
    );
    const [good, bad] = await Promise.allSettled([call('good'), call('bad')]);
    expect(good).toEqual({ status: 'fulfilled', value: 'good' });
    expect(bad).toMatchObject({ status: 'rejected', reason: { message: 'refused' } });
  });
});
