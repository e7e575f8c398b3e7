// The referral sweep (core/referrals.ts, at start and every five minutes) finishes what a crash left
// undone: here a referee paid the program's qualifying achievement, and the qualification was never
// made. A real game has far more referees than the sweep reads at once, most of whom never earn:
// the one owed is found however many newer ones there are.
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { createCore } from '../../src/relay/core/create-core.js';
import { createCatalog, createLogger } from '../../src/relay/index.js';
import { storeBackends } from '../helpers/backends.js';
import { memoryService } from '../helpers/memory-service.js';

const postgresUrl = inject('postgresUrl');
const stores = storeBackends(postgresUrl, 'referral-sweep');
const DAY = 86_400_000;
/** More than one page of the sweep (SWEEP_PAGE). */
const NEWER = 1_001;

describe.each(stores)('the referral sweep on %s', (_name, open) => {
  it('qualifies a referral a crash left undone behind more than a page of newer referees who earned nothing that qualifies, and rewards both sides once', async () => {
    const store = await open();
    try {
      const {
        state: { paid },
        client,
      } = memoryService();
      const catalog = createCatalog([
        { id: 'coin', title: 'Coin', sats: 10, repeat: { kind: 'cooldown', seconds: 0 } },
        { id: 'level', title: 'Level', sats: 20, repeat: { kind: 'once' } },
        { id: 'invite', kind: 'referral', title: 'Invite a friend', referrerSats: 100, refereeSats: 50, afterPlaySeconds: 0, afterAchievement: 'level' },
      ]);
      const core = createCore({ store, payments: client, catalog, limits: { userDailyCapSats: 0, dailyBudgetSats: 0 }, logger: createLogger('silent') });
      const now = Date.now();
      const earn = (userId: string, achievementId: string, at: number) =>
        store.ledger.claim(
          { id: randomUUID(), userId, idempotencyKey: randomUUID(), requestHash: 'h', achievementId, sats: 10, repeat: { kind: 'cooldown', seconds: 0 }, credit: true },
          { userDailyCapSats: 0, dailyBudgetSats: 0 },
          at,
        );
      const r = store.referrals!;
      // Bob, linked 20 days ago on Alice's code, reached the level; the relay died before it qualified him.
      await r.refer([{ programId: 'invite', refereeId: 'bob', referrerId: 'alice', state: 'pending', linkedAt: now - 20 * DAY }]);
      await earn('bob', 'level', now - 19 * DAY);
      // Newer referees, each credited a coin (not the program's achievement): candidates that never qualify.
      const newer = Array.from({ length: NEWER }, (_, i) => `newer-${i}`);
      await r.refer(newer.map((u, i) => ({ programId: 'invite', refereeId: u, referrerId: 'alice', state: 'pending' as const, linkedAt: now - DAY + i })));
      await Promise.all(newer.map((u, i) => earn(u, 'coin', now - DAY + i + 1)));

      expect(await core.referrals!.sweep()).toBe(1);
      await core.payouts.drain();
      expect(paid.sort()).toEqual(['tag-alice', 'tag-bob']);
      // Finished: the next sweep has nothing to do, and pays nothing again.
      expect(await core.referrals!.sweep()).toBe(0);
      await core.payouts.drain();
      expect(paid).toHaveLength(2);
      expect((await r.recent(NEWER + 1)).find((x) => x.refereeId === 'bob')).toMatchObject({ state: 'qualified', rewarded: true });
    } finally {
      await store.close();
    }
  });

  it('qualifies a referral a crash left undone however much the referee earned after the qualifying payment', async () => {
    const store = await open();
    try {
      const {
        state: { paid },
        client,
      } = memoryService();
      const catalog = createCatalog([
        { id: 'coin', title: 'Coin', sats: 10, repeat: { kind: 'cooldown', seconds: 0 } },
        { id: 'level', title: 'Level', sats: 20, repeat: { kind: 'once' } },
        { id: 'invite', kind: 'referral', title: 'Invite a friend', referrerSats: 100, refereeSats: 50, afterPlaySeconds: 0, afterAchievement: 'level' },
      ]);
      const core = createCore({ store, payments: client, catalog, limits: { userDailyCapSats: 0, dailyBudgetSats: 0 }, logger: createLogger('silent') });
      const now = Date.now();
      const earn = (achievementId: string, at: number) =>
        store.ledger.claim(
          { id: randomUUID(), userId: 'bob', idempotencyKey: randomUUID(), requestHash: 'h', achievementId, sats: 10, repeat: { kind: 'cooldown', seconds: 0 }, credit: true },
          { userDailyCapSats: 0, dailyBudgetSats: 0 },
          at,
        );
      // Bob reached the level, the relay died before it qualified him, and he played on: a season
      // of coins came after it (the sweep read his newest 200 entries, and missed it).
      await store.referrals!.refer([{ programId: 'invite', refereeId: 'bob', referrerId: 'alice', state: 'pending', linkedAt: now - 20 * DAY }]);
      await earn('coin', now - 19 * DAY - 1);
      await earn('level', now - 19 * DAY);
      for (let i = 0; i < 250; i++) await earn('coin', now - 18 * DAY + i);

      expect(await core.referrals!.sweep()).toBe(1);
      await core.payouts.drain();
      expect(paid.sort()).toEqual(['tag-alice', 'tag-bob']);
      expect(await core.referrals!.sweep()).toBe(0);
    } finally {
      await store.close();
    }
  });
});
