// What every backend's referral tables keep and forget (sqlite-ledger.test.ts, pg-ledger.test.ts).
import { afterEach, describe, expect, it } from 'vitest';
import type { RelayStore } from '../../src/relay/index.js';

const DAY = 86_400_000;
const T0 = Date.parse('2026-11-22T10:00:00Z');

export function referralStoreContract(name: string, open: () => Promise<RelayStore>) {
  describe(`the ${name} referral store`, () => {
    const opened: RelayStore[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    it('forgets where players were last seen before a time, in chunks, and keeps what was seen since', async () => {
      const store = await open();
      opened.push(store);
      const r = store.referrals!;
      // More than a chunk of a bot farm's addresses, seen 40 days ago.
      await Promise.all(Array.from({ length: 1001 }, (_, i) => r.seen(`bot-${i}`, `198.51.100.${i % 250}`, T0 - 40 * DAY)));
      await r.seen('alice', '203.0.113.1', T0 - 40 * DAY);
      // Seen there again since: the latest time is kept, and the address with it.
      await r.seen('alice', '203.0.113.1', T0 - 10 * DAY);
      await r.seen('alice', '203.0.113.2', T0 - 31 * DAY + 1);

      expect(await r.forget!(T0 - 31 * DAY)).toBe(1001);
      expect(await r.forget!(T0 - 31 * DAY)).toBe(0);
      expect(await r.seenSince('bot-1', '198.51.100.1', 0)).toBe(false);
      expect(await r.seenSince('alice', '203.0.113.1', T0 - 30 * DAY)).toBe(true);
      expect(await r.seenSince('alice', '203.0.113.2', 0)).toBe(true);
    });

    it('lists for the sweep the qualified referrals still owed their rewards before the pending ones, so newer pending ones past its limit never starve them', async () => {
      const store = await open();
      opened.push(store);
      const r = store.referrals!;
      // Qualified 20 days ago; its rewards were not made (a crash, a price missing, a payment deferred).
      await r.refer([{ programId: 'invite', refereeId: 'owed', referrerId: 'alice', state: 'pending', linkedAt: T0 - 21 * DAY }]);
      expect(await r.qualify('invite', 'owed', T0 - 20 * DAY, undefined)).toMatchObject({ fresh: true });
      // Newer referees who never played enough to qualify: more than the sweep reads.
      await r.refer(Array.from({ length: 3 }, (_, i) => ({ programId: 'invite', refereeId: `idle-${i}`, referrerId: 'alice', state: 'pending' as const, linkedAt: T0 - i * DAY })));
      expect((await r.unfinished(T0 - 30 * DAY, 2)).map((x) => x.refereeId)).toEqual(['owed', 'idle-0']);
      await r.rewarded('invite', 'owed');
      expect((await r.unfinished(T0 - 30 * DAY, 2)).map((x) => x.refereeId)).toEqual(['idle-0', 'idle-1']);
    });
  });
}
