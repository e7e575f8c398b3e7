// A prize whose payment could not leave (the service out of reach) is deferred: nothing paid,
// nothing reserved. No client claims a prize again, so the relay does (core/prize-redelivery.ts,
// at start and every five minutes): once the service answers, each such prize is paid, once.
import { describe, expect, inject, it } from 'vitest';
import { createCore } from '../../src/relay/core/create-core.js';
import { createCatalog, createLogger } from '../../src/relay/index.js';
import { storeBackends } from '../helpers/backends.js';
import { memoryService } from '../helpers/memory-service.js';

const postgresUrl = inject('postgresUrl');
const stores = storeBackends(postgresUrl, 'prizes');

describe.each(stores)('deferred prizes on %s', (_name, open) => {
  it('are sent again by the relay once the service answers: each paid once, never refused by a player cap', async () => {
    const store = await open();
    try {
      const { state, client } = memoryService(false);
      const catalog = createCatalog([{ id: 'cup', kind: 'tournament', title: 'Cup', prizes: [50, 20] }]);
      // A player's cap below the prizes: a prize counts on it but is never refused by it.
      const core = createCore({ store, payments: client, catalog, limits: { userDailyCapSats: 10, dailyBudgetSats: 0 }, logger: createLogger('silent') });
      const now = Date.now();
      for (const u of ['ann', 'bob']) await store.ledger.rememberPlayer!(u, `tag-${u}`, now);

      const posted = await core.postResults!('cup', { period: 'p1', ranking: ['ann', 'bob'] }, 'test');
      await core.payouts.drain();
      const states = async () => Promise.all(posted.entries.map(async (e) => (await store.ledger.get(e.id))?.state));
      expect(await states()).toEqual(['deferred', 'deferred']);
      // While the service is still out of reach, they stay deferred (and nothing is paid).
      await core.redeliverPrizes!();
      await core.payouts.drain();
      expect(await states()).toEqual(['deferred', 'deferred']);

      state.up = true;
      expect(await core.redeliverPrizes!()).toBe(2);
      await core.payouts.drain();
      expect(await states()).toEqual(['paid', 'paid']);
      expect(state.paid.sort()).toEqual(['tag-ann', 'tag-bob']);
      // Paid ones are never sent again.
      expect(await core.redeliverPrizes!()).toBe(0);
      expect(state.paid).toHaveLength(2);
      // Each player heard the prize, with its place.
      const heard = await store.events.since('ann', 0);
      expect(heard.map((e) => (e.data as { status: string; place?: number }).status)).toContain('paid');
    } finally {
      await store.close();
    }
  });

  it("are decided again as they were posted, on the day's budget alone: an operator's denial of the player's earlier prize (RELAY_DENIAL_COOLDOWN_HOURS) does not refuse one", async () => {
    const store = await open();
    try {
      const { state, client } = memoryService(false);
      const catalog = createCatalog([{ id: 'cup', kind: 'tournament', title: 'Cup', prizes: [50, 20] }]);
      const limits = { userDailyCapSats: 0, dailyBudgetSats: 0, denialCooldownHours: 24 };
      const core = createCore({ store, payments: client, catalog, limits, holdAboveSats: 30, logger: createLogger('silent') });
      for (const u of ['ann', 'bob']) await store.ledger.rememberPlayer!(u, `tag-${u}`, Date.now());
      // Ann's first place, held above 30 sats, is denied by an operator.
      const p1 = await core.postResults!('cup', { period: 'p1', ranking: ['ann', 'bob'] }, 'test');
      expect(p1.entries[0]).toMatchObject({ userId: 'ann', state: 'held' });
      const denied = await core.settlements.settle(p1.entries[0]!.id, {
        transition: 'deny',
        to: { state: 'rejected', reason: 'denied_by_operator' },
        cause: 'operator',
        audit: { actor: 'ops', action: 'deny' },
      });
      expect(denied?.state).toBe('rejected');
      // The next period's second place is hers, posted and decided (the post reads no denial), and deferred: the service is out of reach.
      const p2 = await core.postResults!('cup', { period: 'p2', ranking: ['bob', 'ann'] }, 'test');
      await core.payouts.drain();
      expect(await store.ledger.get(p2.entries[1]!.id)).toMatchObject({ userId: 'ann', state: 'deferred' });

      state.up = true;
      await core.redeliverPrizes!();
      await core.payouts.drain();
      expect(await store.ledger.get(p2.entries[1]!.id)).toMatchObject({ state: 'paid', sats: 20 });
      expect(state.paid).toContain('tag-ann');
    } finally {
      await store.close();
    }
  });

  it("survive the prune of deferred claims (a relay down for more than a day): no client claims a prize again, so it is the prize's only record", async () => {
    const store = await open();
    try {
      const { state, client } = memoryService(false);
      const catalog = createCatalog([{ id: 'cup', kind: 'tournament', title: 'Cup', prizes: [50] }]);
      const core = createCore({ store, payments: client, catalog, limits: { userDailyCapSats: 0, dailyBudgetSats: 0 }, logger: createLogger('silent') });
      await store.ledger.rememberPlayer!('ann', 'tag-ann', Date.now());
      const posted = await core.postResults!('cup', { period: 'p1', ranking: ['ann'] }, 'test');
      await core.payouts.drain();
      expect((await store.ledger.get(posted.entries[0]!.id))?.state).toBe('deferred');
      // As the relay prunes when it starts again two days later: deferred entries last claimed before a day ago.
      const later = Date.now() + 2 * 86_400_000;
      await store.ledger.prune!(new Date(later - 86_400_000).toISOString().slice(0, 10), 0, later - 86_400_000);
      expect((await store.ledger.get(posted.entries[0]!.id))?.state).toBe('deferred');

      state.up = true;
      expect(await core.redeliverPrizes!()).toBe(1);
      await core.payouts.drain();
      expect(state.paid).toEqual(['tag-ann']);
      // The same results posted again answer the prize as it stands.
      expect((await core.postResults!('cup', { period: 'p1', ranking: ['ann'] }, 'test')).entries.map((e) => e.state)).toEqual(['paid']);
    } finally {
      await store.close();
    }
  });
});
