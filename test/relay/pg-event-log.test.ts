import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { openPgStore, type PlayerEvent, type RelayStore } from '../../src/relay/index.js';
import { appendEventIn } from '../../src/relay/store/postgres/event-log.js';
import { freshDatabase, POSTGRES_HOW } from '../helpers/postgres.js';
import { eventLogContract } from './event-log-contract.js';

const url = inject('postgresUrl');
const options = { owner: 'test-relay', leaseMs: 60_000 };
// Which database each store opened here is on, for a second relay's store on the same one.
const databases = new WeakMap<RelayStore, string>();

// Without a server the contract's tests are listed as skipped, each by name (CI=true fails instead: test/global-setup.ts).
describe.skipIf(!url)(url ? 'on PostgreSQL' : `on PostgreSQL (skipped: ${POSTGRES_HOW})`, () => {
  eventLogContract('PostgreSQL', {
    async open() {
      const database = await freshDatabase(url, { migrated: true });
      const store = await openPgStore(database, options);
      databases.set(store, database);
      return store;
    },
    openSibling: (store) => openPgStore(databases.get(store)!, { ...options, owner: 'another-relay' }),
  });
});

// Red-team pass F: a relay that starts while another relay's append for a player is still
// uncommitted (a rolling deploy: streams reconnect to the new relay mid-payment) read its start
// floor past that event's id; once committed, its player's live events were read after the floor,
// so a stream opened here never heard that one (until it reconnected).
describe.skipIf(!url)('a PostgreSQL subscriber started while an append elsewhere is uncommitted', () => {
  it('hands on that event once committed, before the player’s next', async () => {
    const database = await freshDatabase(url, { migrated: true });
    const here = await openPgStore(database, options);
    const there = await openPgStore(database, { ...options, owner: 'another-relay' });
    const pool = new pg.Pool({ connectionString: database, max: 1 });
    const c = await pool.connect();
    const heard: PlayerEvent[] = [];
    let stop: (() => Promise<void>) | undefined;
    try {
      await c.query('BEGIN');
      const late = await appendEventIn(c, 'alice', 'ramp', { n: 1 });
      // Another player's event commits after it took its id: the highest id at the subscription.
      await there.events.append('bob', 'ramp', { n: 2 });
      stop = await here.events.subscribe!((e) => heard.push(e));
      await c.query('COMMIT');
      const next = await there.events.append('alice', 'ramp', { n: 3 });
      await expect.poll(() => heard.some((e) => e.id === next.id)).toBe(true);
      expect(heard.filter((e) => e.userId === 'alice').map((e) => e.id)).toEqual([late.id, next.id]);
    } finally {
      c.release();
      await pool.end();
      await stop?.();
      await Promise.all([here.close(), there.close()]);
    }
  });
});
