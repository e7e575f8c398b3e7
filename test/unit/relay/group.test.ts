import { describe, expect, it } from 'vitest';
import { type GroupResult, grouped, madeAlone } from '../../../src/relay/store/postgres/group.js';

/** Calls keyed by their first letter (a player, say), and a log of what went out. */
function keyedByLetter(send: (items: readonly string[]) => Promise<ReadonlyArray<GroupResult<string>>>) {
  const log: string[] = [];
  const call = grouped<string, string>(
    async (items) => {
      log.push(`group ${items.join(' ')}`);
      return send(items);
    },
    { keys: (item) => [item[0]!] },
  );
  return { call, log };
}

describe('grouped calls (store/postgres/group.ts)', () => {
  it('holds a later call on the key of a call made alone until that call ends; calls on other keys go on', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const aloneA1 = async () => {
      await held;
      log.push('alone a1');
      return 'a1';
    };
    // a1's group could not make it: it is made alone, and ends once `held` does.
    const { call, log } = keyedByLetter(async (items) => items.map((item) => (item === 'a1' ? madeAlone(aloneA1()) : item)));
    const a1 = call('a1');
    await expect.poll(() => log).toEqual(['group a1']);
    const later = Promise.all([call('a2'), call('c1')]);
    await expect.poll(() => log).toEqual(['group a1', 'group c1']);
    release();
    expect(await Promise.all([a1, later])).toEqual(['a1', ['a2', 'c1']]);
    expect(log).toEqual(['group a1', 'group c1', 'alone a1', 'group a2']);
  });

  it('answers each call made alone with its own outcome, and frees its key when it fails too', async () => {
    const { call, log } = keyedByLetter(async (items) => items.map((item) => (item === 'a1' ? madeAlone(Promise.reject(new Error('refused'))) : madeAlone(Promise.resolve(item)))));
    const [bad, good, next] = await Promise.allSettled([call('a1'), call('b1'), call('a2')]);
    expect(bad).toMatchObject({ status: 'rejected', reason: { message: 'refused' } });
    expect([good, next]).toEqual([
      { status: 'fulfilled', value: 'b1' },
      { status: 'fulfilled', value: 'a2' },
    ]);
    expect(log).toEqual(['group a1 b1', 'group a2']);
  });

  it('puts a call its group hands on to the next (busy) before a later call on its key', async () => {
    let handedOn = false;
    const { call, log } = keyedByLetter(async (items) =>
      items.map((item) => {
        if (item !== 'a1' || handedOn) return item;
        // Busy the first time: handed on to the next group.
        handedOn = true;
        return call(item, true);
      }),
    );
    expect(await Promise.all([call('a1'), call('a2')])).toEqual(['a1', 'a2']);
    expect(log).toEqual(['group a1', 'group a1', 'group a2']);
  });
});
