import type { EventLog } from './event-log.js';
import type { Ledger } from './ledger.js';

/**
 * Where a relay keeps what must survive it: the ledger, and the event log (player events, the
 * webhook inbox, ramp sessions). They come together from one backend, so none of them can be
 * left behind in memory while the others are durable, and a settlement writes the ledger and the
 * player's event in one transaction.
 */
export interface RelayStore {
  ledger: Ledger;
  events: EventLog;
  /** A trivial query (readiness): resolves when the backend answers, rejects when it cannot. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
