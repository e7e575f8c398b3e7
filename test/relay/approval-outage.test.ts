// An operator's approval that met the service's outage: the approved entry could not leave, so it
// was deferred (nothing paid). Sent again, it is paid without a second approval when its sats are
// the ones approved; decided higher since (a catalog changed), it waits for an operator again.
// A login streak's hold is decided by the ledger (its day's step), by the same rule. On SQLite and
// PostgreSQL alike.
import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { createCore } from '../../src/relay/core/create-core.js';
import type { PlayerClaims } from '../../src/relay/core/player-tokens.js';
import { createCatalog, createLogger } from '../../src/relay/index.js';
import { storeBackends } from '../helpers/backends.js';
import { memoryService } from '../helpers/memory-service.js';

const postgresUrl = inject('postgresUrl');
const stores = storeBackends(postgresUrl, 'approval-outage');
const DAY = 86_400_000;

describe.each(stores)('a held claim approved during an outage, on %s', (_name, open) => {
  it('is paid when its client sends the same key again, with no second approval; at higher sats it is held again', async () => {
    const store = await open();
    try {
      const { state, client } = memoryService();
      const t = Date.parse('2026-11-25T20:00:00Z');
      const golden = (sats: number) => createCatalog([{ id: 'golden', title: 'Golden', sats, repeat: { kind: 'cooldown', seconds: 0 } }]);
      const coreWith = (sats: number) =>
        createCore({
          store,
          payments: client,
          catalog: golden(sats),
          limits: { userDailyCapSats: 0, dailyBudgetSats: 0 },
          holdAboveSats: 1_000,
          clock: () => t,
          logger: createLogger('silent'),
        });
      const core = coreWith(5_000);
      const claim = (c: ReturnType<typeof coreWith>, player: PlayerClaims, key: string) =>
        c.claim(player, key, { achievementId: 'golden' }, new Request('http://relay/v1/rewards'));
      const ann: PlayerClaims = { userId: 'ann', gamertag: 'tag-ann', exp: t + DAY, iat: t };
      const bob: PlayerClaims = { userId: 'bob', gamertag: 'tag-bob', exp: t + DAY, iat: t };

      const approveDuringOutage = async (c: ReturnType<typeof coreWith>, player: PlayerClaims, key: string) => {
        const held = await claim(c, player, key);
        expect(held).toMatchObject({ kind: 'answered', entry: { state: 'held', sats: 5_000 } });
        state.up = false;
        const id = (held as { entry: { id: string } }).entry.id;
        expect(await c.decide(id, 'approve', 'ops')).toMatchObject({ kind: 'settled', entry: { state: 'deferred' } });
        state.up = true;
      };

      const annKey = randomUUID();
      await approveDuringOutage(core, ann, annKey);
      // The client sends its key again: the approved sats go out.
      expect(await claim(core, ann, annKey)).toMatchObject({ kind: 'answered', entry: { state: 'paid', sats: 5_000 } });
      expect(state.paid).toEqual(['tag-ann']);

      // Approved at 5,000; the catalog now says 8,000: no operator approved those.
      const bobKey = randomUUID();
      await approveDuringOutage(core, bob, bobKey);
      expect(await claim(coreWith(8_000), bob, bobKey)).toMatchObject({ kind: 'answered', entry: { state: 'held', sats: 8_000 } });
      expect(state.paid).toEqual(['tag-ann']);
    } finally {
      await store.close();
    }
  });

  it("a login streak's day held by the ledger is paid when its key is sent again, with no second approval; at higher sats it is held again", async () => {
    const store = await open();
    try {
      const { state, client } = memoryService();
      let now = Date.parse('2026-11-24T20:00:00Z');
      // Day 1 pays 2,000 (under the hold); day 2 pays its step, above it: the ledger holds it.
      const streak = (day2: number) => createCatalog([{ id: 'login', title: 'Login', sats: 2_000, repeat: { kind: 'streak', sats: [2_000, day2] } }]);
      const coreWith = (day2: number) =>
        createCore({
          store,
          payments: client,
          catalog: streak(day2),
          limits: { userDailyCapSats: 0, dailyBudgetSats: 0 },
          holdAboveSats: 3_000,
          clock: () => now,
          logger: createLogger('silent'),
        });
      const core = coreWith(5_000);
      const claim = (c: ReturnType<typeof coreWith>, player: PlayerClaims, key: string) => c.claim(player, key, { achievementId: 'login' }, new Request('http://relay/v1/rewards'));
      const ann: PlayerClaims = { userId: 'ann', gamertag: 'tag-ann', exp: now + 3 * DAY, iat: now };
      const bob: PlayerClaims = { userId: 'bob', gamertag: 'tag-bob', exp: now + 3 * DAY, iat: now };
      for (const p of [ann, bob]) expect(await claim(core, p, randomUUID())).toMatchObject({ kind: 'answered', entry: { state: 'paid', sats: 2_000 } });
      now += DAY;

      const approveDuringOutage = async (player: PlayerClaims, key: string) => {
        const held = await claim(core, player, key);
        expect(held).toMatchObject({ kind: 'answered', entry: { state: 'held', sats: 5_000, terms: { streakDay: 2 } } });
        state.up = false;
        const id = (held as { entry: { id: string } }).entry.id;
        expect(await core.decide(id, 'approve', 'ops')).toMatchObject({ kind: 'settled', entry: { state: 'deferred' } });
        state.up = true;
      };

      const annKey = randomUUID();
      await approveDuringOutage(ann, annKey);
      // The client sends its key again the same day: the day's step, the approved sats, goes out.
      expect(await claim(core, ann, annKey)).toMatchObject({ kind: 'answered', entry: { state: 'paid', sats: 5_000, terms: { streakDay: 2 } } });
      expect(state.paid).toEqual(['tag-ann', 'tag-bob', 'tag-ann']);

      // Approved at 5,000; day 2's step is now 8,000: no operator approved those.
      const bobKey = randomUUID();
      await approveDuringOutage(bob, bobKey);
      expect(await claim(coreWith(8_000), bob, bobKey)).toMatchObject({ kind: 'answered', entry: { state: 'held', sats: 8_000 } });
      expect(state.paid).toEqual(['tag-ann', 'tag-bob', 'tag-ann']);
    } finally {
      await store.close();
    }
  });
});
