import type { RewardTerms } from '../../wire/relay-api.js';
import { type KeyDecision, keyDecision } from '../core/claim-decision.js';
import { LIFECYCLE } from '../core/lifecycle.js';
import { type EntryKind, type LedgerEntry, type LedgerState, RESERVING_STATES, type SendPhase, type Settlement } from '../core/ports/ledger.js';

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
  kind: EntryKind;
  /** Null for most entries: only a priced, streak, prize or referral reward has terms. */
  terms: RewardTerms | null;
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
    day: r.day,
  };
  if (r.state === 'sending') e.phase = r.phase;
  if (r.reason !== null) e.reason = r.reason;
  if (r.payment_id !== null) e.paymentId = r.payment_id;
  if (r.gamertag !== null) e.gamertag = r.gamertag;
  if (r.occurred_at !== null) e.occurredAt = r.occurred_at;
  if (r.address !== null && r.address !== undefined) e.address = r.address;
  if (r.settled_at !== null) e.settledAt = Number(r.settled_at);
  if (r.kind !== 'payout' && r.kind !== undefined) e.kind = r.kind;
  if (r.terms !== null && r.terms !== undefined) e.terms = r.terms;
  return e;
}

/** The states that hold a reservation, as SQL (spelled out, so a partial index on them can be used). */
export const RESERVING_SQL = `state IN (${RESERVING_STATES.map((s) => `'${s}'`).join(', ')})`;
/** The states a guest's credit is merged from (the lifecycle's `merge`: credited, or held for an operator), as both stores' SQL spells them. */
export const MERGED_SQL = `state IN (${LIFECYCLE.merge.from.map((s) => `'${s}'`).join(', ')})`;

/**
 * keyDecision (core/claim-decision.ts) for a claim (`withdrawal` false) or a withdrawal: a key an
 * entry of the other sort holds is that entry's answer, never decided again as this one (a
 * deferred claim is not turned into a withdrawal, nor the other way).
 */
export function keyDecisionOf(existing: Pick<LedgerRow, 'state' | 'request_hash' | 'kind'> | null | undefined, request: { requestHash: string }, withdrawal: boolean): KeyDecision {
  if (!existing) return 'insert';
  if ((existing.kind === 'withdrawal') !== withdrawal) return 'existing';
  return keyDecision({ state: existing.state, requestHash: existing.request_hash }, request);
}

/** Whether an entry in its state counts on the caps, the budget and the repeat rules: a reward (paid or credited), never a withdrawal. */
export const reservesClaims = (r: Pick<LedgerRow, 'state' | 'kind'>): boolean => r.kind !== 'withdrawal' && RESERVING_STATES.includes(r.state);

/**
 * The row a settlement leaves, from the row it found: the state and its reason as the settlement
 * says; the transaction id and gamertag it had unless it names new ones; settled at `now` when
 * paid or failed; back in the claimed phase when it goes (back) to sending; on `day` when it moves.
 */
export function settledRow(before: LedgerRow, to: Settlement, now: number, day = before.day): LedgerRow {
  return {
    ...before,
    state: to.state,
    phase: to.state === 'sending' ? 'claimed' : before.phase,
    reason: 'reason' in to ? to.reason : null,
    payment_id: ('paymentId' in to ? to.paymentId : undefined) ?? before.payment_id,
    gamertag: ('gamertag' in to ? to.gamertag : undefined) ?? before.gamertag,
    settled_at: to.state === 'paid' || to.state === 'failed' ? now : null,
    day,
  };
}
