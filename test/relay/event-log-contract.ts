// What every event log backend must do, as one suite (like ledger-contract.ts): run it with a factory per backend.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { PlayerEvent, RelayStore } from '../../src/relay/index.js';

export interface EventLogBackend {
  /** A store on a new, empty database. */
  open(): Promise<RelayStore>;
  /** A second store on the same database as `store` (a second relay), for backends shared by several relays. */
  openSibling?(store: RelayStore): Promise<RelayStore>;
}

export function eventLogContract(name: string, backend: EventLogBackend) {
  describe(`the ${name} event log keeps the event log contract`, () => {
    const opened: RelayStore[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });
    const events = async () => {
      const s = await backend.open();
      opened.push(s);
      return s.events;
    };
    const ids = (list: PlayerEvent[]) => list.map((e) => e.id);

    it("appends a player's events with increasing ids, and gives them back after an id, oldest first, a page at a time", async () => {
      const log = await events();
      const appended: PlayerEvent[] = [];
      for (let i = 0; i < 7; i++) appended.push(await log.append('alice', 'ramp', { n: i }));
      expect(appended.map((e) => [e.userId, e.type, e.data])).toEqual(Array.from({ length: 7 }, (_, i) => ['alice', 'ramp', { n: i }]));
      for (let i = 1; i < 7; i++) expect(appended[i]!.id).toBeGreaterThan(appended[i - 1]!.id);
      // A reward's event is the ledger's to write, with its change: never appended on its own.
      await expect(log.append('alice', 'reward', { n: 0 })).rejects.toThrow(/write primitive/);
      expect(appended.every((e) => typeof e.createdAt === 'number' && Math.abs(e.createdAt - Date.now()) < 60_000)).toBe(true);

      expect(await log.since('alice', 0)).toEqual(appended);
      expect(ids(await log.since('alice', appended[2]!.id))).toEqual(ids(appended.slice(3)));
      expect(await log.since('alice', appended[6]!.id)).toEqual([]);
      // Paging: each page resumes after the last id of the one before.
      const first = await log.since('alice', 0, 3);
      const second = await log.since('alice', first[2]!.id, 3);
      const third = await log.since('alice', second[2]!.id, 3);
      expect([ids(first), ids(second), ids(third)]).toEqual([ids(appended.slice(0, 3)), ids(appended.slice(3, 6)), ids(appended.slice(6))]);
    });

    it("keeps each player's events to that player", async () => {
      const log = await events();
      const a1 = await log.append('alice', 'ramp', { who: 'a1' });
      const b1 = await log.append('bob', 'ramp', { who: 'b1' });
      const a2 = await log.append('alice', 'ramp', { who: 'a2' });
      expect(ids(await log.since('alice', 0))).toEqual([a1.id, a2.id]);
      expect(ids(await log.since('bob', 0))).toEqual([b1.id]);
      // Another player's later id is no cursor into this player's events.
      expect(ids(await log.since('alice', b1.id))).toEqual([a2.id]);
      expect(await log.since('carol', 0)).toEqual([]);
    });

    it('takes a webhook delivery once, and tells the player only when it names one of their ramp sessions', async () => {
      const log = await events();
      const ref = `ref-${randomUUID()}`;
      await log.rememberRampSession(ref, 'alice', 'session-1', Date.now() + 900_000);
      const told = { type: 'ramp', data: { status: 'completed' } };

      const first = await log.receiveWebhook('evt-1', 'ramp.completed', ref, told);
      expect(first.fresh).toBe(true);
      expect(first.event).toMatchObject({ userId: 'alice', type: 'ramp', data: { status: 'completed' } });
      // The same delivery again: not fresh, and the player hears nothing more.
      expect(await log.receiveWebhook('evt-1', 'ramp.completed', ref, told)).toEqual({ fresh: false });
      expect(ids(await log.since('alice', 0))).toEqual([first.event!.id]);

      // A reference no one remembered, or none at all: recorded, fresh, no player's event.
      expect(await log.receiveWebhook('evt-2', 'ramp.completed', 'ref-unknown', told)).toEqual({ fresh: true });
      expect(await log.receiveWebhook('evt-3', 'payment.completed', undefined, told)).toEqual({ fresh: true });
      // A remembered reference but nothing to tell: recorded, no event.
      expect(await log.receiveWebhook('evt-4', 'ramp.updated', ref, undefined)).toEqual({ fresh: true });
      expect(ids(await log.since('alice', 0))).toEqual([first.event!.id]);
    });

    it('lists the newest webhook deliveries, each once, and whether each reached a player', async () => {
      const log = await events();
      const ref = `ref-${randomUUID()}`;
      await log.rememberRampSession(ref, 'alice', 'session-1', Date.now() + 900_000);
      await log.receiveWebhook('evt-a', 'ramp.completed', ref, { type: 'ramp', data: {} });
      await log.receiveWebhook('evt-a', 'ramp.completed', ref, { type: 'ramp', data: {} });
      await log.receiveWebhook('evt-b', 'ramp.completed', 'ref-unknown', { type: 'ramp', data: {} });
      await log.receiveWebhook('evt-c', 'payment.completed', undefined, undefined);

      const all = await log.recentWebhooks(10);
      expect(all.map((w) => w.eventId).sort()).toEqual(['evt-a', 'evt-b', 'evt-c']);
      const byId = Object.fromEntries(all.map((w) => [w.eventId, w]));
      expect(byId['evt-a']).toMatchObject({ type: 'ramp.completed', referenceId: ref, actedOn: true });
      expect(byId['evt-b']).toMatchObject({ referenceId: 'ref-unknown', actedOn: false });
      expect(byId['evt-c']).toMatchObject({ type: 'payment.completed', actedOn: false });
      expect(byId['evt-c']).not.toHaveProperty('referenceId');
      // Newest first.
      for (let i = 1; i < all.length; i++) expect(all[i - 1]!.receivedAt).toBeGreaterThanOrEqual(all[i]!.receivedAt);
      expect(await log.recentWebhooks(2)).toHaveLength(2);
    });

    if (backend.openSibling) {
      const openSibling = backend.openSibling;
      it('lets a subscriber hear an append made through another store on the same database, in id order', async () => {
        const here = await backend.open();
        opened.push(here);
        const there = await openSibling(here);
        opened.push(there);
        expect(here.events.subscribe).toBeTypeOf('function');
        const heard: PlayerEvent[] = [];
        const stop = await here.events.subscribe!((e) => heard.push(e));
        try {
          const a = await there.events.append('alice', 'ramp', { n: 1 });
          const b = await there.events.append('alice', 'ramp', { n: 2 });
          const c = await there.events.append('bob', 'ramp', { n: 3 });
          await expect.poll(() => heard.map((e) => e.id).sort((x, y) => x - y)).toEqual([a.id, b.id, c.id]);
          expect(heard.filter((e) => e.userId === 'alice').map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
        } finally {
          await stop();
        }
      });
    }
  });
}
