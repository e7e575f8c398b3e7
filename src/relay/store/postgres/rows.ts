// What the PostgreSQL ledger's statements share: the row, the states they name, an event as JSON.
import type { PlayerEvent } from '../../core/ports/event-log.js';
import { RESERVING_STATES, TOLD_STATES } from '../../core/ports/ledger.js';
import type { LedgerRow } from '../ledger-row.js';

/** An entry's row, with whether its sats are counted in the day's budget. */
export type Row = LedgerRow & { budgeted: boolean };

export const RESERVING = RESERVING_STATES as readonly string[];
export const TOLD = TOLD_STATES as readonly string[];

/** How many groups a call whose lock is held elsewhere tries before it waits for the lock alone. */
export const BUSY_GROUPS = 2;

/**
 * A group PostgreSQL stopped on a lock (picked to break a deadlock, a serialization failure, a
 * lock waited on past lock_timeout): no outage, and nothing of the group was committed. Each of
 * its calls is made again alone, rather than all of them failing.
 */
export const lockConflict = (err: unknown): boolean => ['40P01', '40001', '55P03'].includes((err as { code?: string }).code ?? '');

/** An event as a statement's row_to_json gives it back. */
export interface EventJson {
  id: number | string;
  user_id: string;
  type: string;
  data: unknown;
  created_at: number | string;
}
export const eventOf = (e: EventJson): PlayerEvent => ({ id: Number(e.id), userId: e.user_id, type: e.type, data: e.data, createdAt: Number(e.created_at) });
