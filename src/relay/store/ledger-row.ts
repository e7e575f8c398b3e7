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

export const toLedgerEntry = (r: LedgerRow): LedgerEntry => ({
  id: r.id,
  userId: r.user_id,
  idempotencyKey: r.idempotency_key,
  requestHash: r.request_hash,
  achievementId: r.achievement_id,
  sats: r.sats,
  state: r.state,
  ...(r.state === 'sending' ? { phase: r.phase } : {}),
  createdAt: Number(r.created_at),
  ...(r.reason === null ? {} : { reason: r.reason }),
  ...(r.payment_id === null ? {} : { paymentId: r.payment_id }),
  ...(r.gamertag === null ? {} : { gamertag: r.gamertag }),
  ...(r.occurred_at === null ? {} : { occurredAt: r.occurred_at }),
  ...(r.address === null || r.address === undefined ? {} : { address: r.address }),
  ...(r.settled_at === null ? {} : { settledAt: Number(r.settled_at) }),
});

/** The states that hold a reservation, as SQL (spelled out, so a partial index on them can be used). */
export const RESERVING_SQL = `state IN (${RESERVING_STATES.map((s) => `'${s}'`).join(', ')})`;
