import { RESERVING_STATES, type LedgerEntry, type LedgerState, type SendPhase } from './ledger.js';

/** A ledger entry as both SQL backends store it (PostgreSQL hands bigints back as strings). */
export interface LedgerRow {
  id: string;
  user_id: string;
  idempotency_key: string;
  request_hash: string;
  achievement_id: string;
  sats: number;
  state: LedgerState;
  phase: SendPhase;
  reason: string | null;
  payment_id: string | null;
  gamertag: string | null;
  occurred_at: string | null;
  address: string | null;
  day: string;
  created_at: number | string;
  settled_at: number | string | null;
}

// Optional fields are set one by one: spreading `cond ? { x } : {}` made an object per field.
export function toLedgerEntry(r: LedgerRow): LedgerEntry {
  const e: LedgerEntry = {
    id: r.id,
    userId: r.user_id,
    idempotencyKey: r.idempotency_key,
    requestHash: r.request_hash,
    achievementId: r.achievement_id,
    sats: r.sats,
    state: r.state,
    createdAt: Number(r.created_at),
  };
  if (r.state === 'sending') e.phase = r.phase;
  if (r.reason !== null) e.reason = r.reason;
  if (r.payment_id !== null) e.paymentId = r.payment_id;
  if (r.gamertag !== null) e.gamertag = r.gamertag;
  if (r.occurred_at !== null) e.occurredAt = r.occurred_at;
  if (r.address !== null && r.address !== undefined) e.address = r.address;
  if (r.settled_at !== null) e.settledAt = Number(r.settled_at);
  return e;
}

/** The states that hold a reservation, as SQL (spelled out, so a partial index on them can be used). */
export const RESERVING_SQL = `state IN (${RESERVING_STATES.map((s) => `'${s}'`).join(', ')})`;
