// An operator's approval that met the service's outage: the approved entry could not leave, so it
// was deferred (nothing paid). Sent again, it is paid without a second approval when its sats are
// the ones approved; decided higher since (a catalog changed), it waits for an operator again.
// On SQLite and PostgreSQL alike.
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
});
