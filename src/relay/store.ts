import type { EventLog } from './event-log.js';
import type { Ledger } from './ledger.js';
import { openSqliteDb } from './sqlite-db.js';
import { sqliteEventLog } from './sqlite-event-log.js';
import { sqliteLedger } from './sqlite-ledger.js';

/**
 * Where a relay keeps what must survive it: the ledger, and the event log (player events, the
 * webhook inbox, ramp sessions). They come together from one backend, so none of them can be
 * left behind in memory while the others are durable.
 */
export interface RelayStore {
  ledger: Ledger;
  events: EventLog;
  close(): Promise<void>;
}

/** The embedded backend: one SQLite file, one group commit shared by the ledger and the event log. */
export function openSqliteStore(file: string): RelayStore {
  const db = openSqliteDb(file);
  return { ledger: sqliteLedger(db), events: sqliteEventLog(db), close: () => db.close() };
}
