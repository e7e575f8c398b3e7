import type { EventLog } from './event-log.js';
import type { Ledger } from './ledger.js';
import type { ReferralStore } from './referral-store.js';

/**
 * Where a relay keeps what must survive it: the ledger, and the event log (player events, the
 * webhook inbox, ramp sessions). They come together from one backend, so none of them can be
 * left behind in memory while the others are durable, and a settlement writes the ledger and the
 * player's event in one transaction.
 */
export interface RelayStore {
  ledger: Ledger;
  events: EventLog;
  /** The referral programs' tables (issue 37); a store of one's own without them runs no referral program. */
  referrals?: ReferralStore;
  /** A trivial query (readiness): resolves when the backend answers, rejects when it cannot. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
