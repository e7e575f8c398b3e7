// What every backend's referral tables keep and forget (sqlite-ledger.test.ts, pg-ledger.test.ts).
import { randomUUID } from 'node:crypto';
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

    it('lists for the sweep, page by page, the referrals owed their rewards and the pending ones whose referee has earned since the link, never those of referees who did not', async () => {
      const store = await open();
      opened.push(store);
      const r = store.referrals!;
      const earn = (userId: string, at: number) =>
        store.ledger.claim(
          { id: randomUUID(), userId, idempotencyKey: randomUUID(), requestHash: 'h', achievementId: 'coin', sats: 10, repeat: { kind: 'cooldown', seconds: 0 }, credit: true },
          { userDailyCapSats: 0, dailyBudgetSats: 0 },
          at,
        );
      // Qualified 20 days ago; its rewards were not made (a crash, a price missing, a payment deferred).
      await r.refer([{ programId: 'invite', refereeId: 'owed', referrerId: 'alice', state: 'pending', linkedAt: T0 - 21 * DAY }]);
      expect(await r.qualify('invite', 'owed', T0 - 20 * DAY, undefined)).toMatchObject({ fresh: true });
      // Referees credited after their link, whose qualification a crash left undone.
      await r.refer(
        Array.from({ length: 3 }, (_, i) => ({ programId: 'invite', refereeId: `earned-${i}`, referrerId: 'alice', state: 'pending' as const, linkedAt: T0 - (10 + i) * DAY })),
      );
      for (let i = 0; i < 3; i++) await earn(`earned-${i}`, T0 - (10 + i) * DAY + 60_000);
      // Newer referees who never earned (far more of them, in a real game, than a page), one who
      // earned only before its link, and one who earned past the 30 days the sweep looks back.
      await r.refer([
        ...Array.from({ length: 5 }, (_, i) => ({ programId: 'invite', refereeId: `idle-${i}`, referrerId: 'alice', state: 'pending' as const, linkedAt: T0 - i * DAY })),
        { programId: 'invite', refereeId: 'before', referrerId: 'alice', state: 'pending', linkedAt: T0 - 5 * DAY },
        { programId: 'invite', refereeId: 'old', referrerId: 'alice', state: 'pending', linkedAt: T0 - 40 * DAY },
      ]);
      await earn('before', T0 - 6 * DAY);
      await earn('old', T0 - 39 * DAY);

      const since = T0 - 30 * DAY;
      const first = await r.unfinished(since, 2);
      expect(first.map((x) => x.refereeId)).toEqual(['earned-0', 'earned-1']);
      const second = await r.unfinished(since, 2, first.at(-1));
      expect(second.map((x) => x.refereeId)).toEqual(['earned-2', 'owed']);
      expect(await r.unfinished(since, 2, second.at(-1))).toEqual([]);
      // Once rewarded, a referral is not listed again.
      await r.rewarded('invite', 'owed');
      expect((await r.unfinished(since, 10)).map((x) => x.refereeId)).toEqual(['earned-0', 'earned-1', 'earned-2']);
    });
  });
}
