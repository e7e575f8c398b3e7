import type { Ledger } from '../../core/ports/ledger.js';
import type { SqliteDb } from './db.js';

/**
 * The players linked from a client address per UTC day (RELAY_LINKS_PER_ADDRESS_PER_DAY), on
 * SQLite: a link is counted and recorded in one write of the store's thread, so the cap holds.
 * (Pruned with the ledger's other past days.)
 */
export function sqliteAddressLinks({ db, write }: SqliteDb): Required<Pick<Ledger, 'linkAddress' | 'linkedPlayers'>> {
  const q = {
    linked: db.prepare<[string, string, string], { n: number }>('SELECT 1 AS n FROM address_links WHERE address = ? AND day = ? AND user_id = ?'),
    links: db.prepare<[string, string], { n: number }>('SELECT count(*) AS n FROM address_links WHERE address = ? AND day = ?'),
    linkedPlayers: db.prepare<[string, string], { user_id: string }>('SELECT user_id FROM address_links WHERE address = ? AND day = ?'),
    link: db.prepare<[string, string, string]>('INSERT INTO address_links (address, day, user_id) VALUES (?, ?, ?)'),
  };
  return {
    linkAddress: (address, day, userId, max) =>
      write(() => {
        if (q.linked.get(address, day, userId)) return true;
        if (max > 0 && q.links.get(address, day)!.n >= max) return false;
        q.link.run(address, day, userId);
        return true;
      }),
    linkedPlayers: async (address, day) => q.linkedPlayers.all(address, day).map((r) => r.user_id),
  };
}
