// A held prize (above RELAY_HOLD_ABOVE_SATS, or a tournament with "hold": true) waits for an
// operator. Approved on a later UTC day it counts on that day, as any held claim; but like the
// post that made it, a player's cap never refuses it (the game's server awarded it, no client claimed it).
import { describe, expect, inject, it } from 'vitest';
import { createCore } from '../../src/relay/core/create-core.js';
import { createCatalog, createLogger } from '../../src/relay/index.js';
import { storeBackends } from '../helpers/backends.js';
import { memoryService } from '../helpers/memory-service.js';

const postgresUrl = inject('postgresUrl');
const stores = storeBackends(postgresUrl, 'prize-approval');

const DAY = 86_400_000;

describe.each(stores)('a held prize on %s', (_name, open) => {
  it("approved on a later UTC day is paid: the day's player cap does not refuse it", async () => {
    const store = await open();
    try {
      const {
        state: { paid, descriptions },
        client,
      } = memoryService();
      const catalog = createCatalog([{ id: 'cup', kind: 'tournament', title: 'Cup', prizes: [5_000, 50] }]);
      let t = Date.parse('2026-11-25T20:00:00Z');
      // A player's cap far below the first prize, which is held above 1,000 sats.
      const core = createCore({
        store,
        payments: client,
        catalog,
        limits: { userDailyCapSats: 100, dailyBudgetSats: 0 },
        holdAboveSats: 1_000,
        clock: () => t,
        logger: createLogger('silent'),
      });
      for (const u of ['ann', 'bob']) await store.ledger.rememberPlayer!(u, `tag-${u}`, t);
      const posted = await core.postResults!('cup', { period: '2026-W48', ranking: ['ann', 'bob'] }, 'test');
      expect(posted.entries.map((e) => e.state)).toEqual(['held', 'sending']);
      await core.payouts.drain();

      // The operator looks the next morning.
      t += DAY;
      const approved = await core.decide(posted.entries[0]!.id, 'approve', 'ops');
      expect(approved).toMatchObject({ kind: 'settled', entry: { state: 'paid', sats: 5_000 } });
      expect(paid.sort()).toEqual(['tag-ann', 'tag-bob']);
      // Under the tournament's title, as the prize paid at the post was.
      expect(descriptions.map((d) => d.split(' (rewardbus ')[0])).toEqual(['Cup', 'Cup']);
    } finally {
      await store.close();
    }
  });

  it('approved while the service was out of reach is deferred, then sent again by the relay without a second approval', async () => {
    const store = await open();
    try {
      const { state, client } = memoryService();
      const catalog = createCatalog([{ id: 'cup', kind: 'tournament', title: 'Cup', prizes: [5_000] }]);
      const t = Date.parse('2026-11-25T20:00:00Z');
      const core = createCore({
        store,
        payments: client,
        catalog,
        limits: { userDailyCapSats: 0, dailyBudgetSats: 0 },
        holdAboveSats: 1_000,
        clock: () => t,
        logger: createLogger('silent'),
      });
      await store.ledger.rememberPlayer!('ann', 'tag-ann', t);
      const [prize] = (await core.postResults!('cup', { period: '2026-W48', ranking: ['ann'] }, 'test')).entries;
      expect(prize!.state).toBe('held');

      // The operator approves during an outage: nothing could leave, so the prize is deferred.
      state.up = false;
      expect(await core.decide(prize!.id, 'approve', 'ops')).toMatchObject({ kind: 'settled', entry: { state: 'deferred' } });
      state.up = true;
      // The relay's redelivery sends it: the operator approved these sats already.
      expect(await core.redeliverPrizes!()).toBe(1);
      await core.payouts.drain();
      expect(await store.ledger.get(prize!.id)).toMatchObject({ state: 'paid', sats: 5_000 });
      expect(state.paid).toEqual(['tag-ann']);
    } finally {
      await store.close();
    }
  });

  it('deferred with no approval is decided on the hold in force when sent again', async () => {
    const store = await open();
    try {
      const { state, client } = memoryService(false);
      const catalog = createCatalog([{ id: 'cup', kind: 'tournament', title: 'Cup', prizes: [5_000] }]);
      const t = Date.parse('2026-11-25T20:00:00Z');
      const options = { store, payments: client, catalog, limits: { userDailyCapSats: 0, dailyBudgetSats: 0 }, clock: () => t, logger: createLogger('silent') };
      // Posted with no hold while the service is out of reach: deferred, never sent.
      const before = createCore({ ...options, holdAboveSats: 0 });
      await store.ledger.rememberPlayer!('ann', 'tag-ann', t);
      const [prize] = (await before.postResults!('cup', { period: '2026-W48', ranking: ['ann'] }, 'test')).entries;
      await before.payouts.drain();
      expect(await store.ledger.get(prize!.id)).toMatchObject({ state: 'deferred' });
      // The operator has since set a hold: no one approved these sats, so they wait for one.
      state.up = true;
      const after = createCore({ ...options, holdAboveSats: 1_000 });
      expect(await after.redeliverPrizes!()).toBe(0);
      expect(await store.ledger.get(prize!.id)).toMatchObject({ state: 'held' });
      expect(state.paid).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
