import type { RewardRecord, RewardStatus } from '../../wire/relay-api.js';
import type { LedgerEntry, LedgerState } from './ports/ledger.js';

const STATUS: Record<LedgerState, RewardStatus> = {
  sending: 'pending',
  deferred: 'pending',
  paid: 'paid',
  failed: 'failed',
  rejected: 'rejected',
  needs_review: 'needs_review',
  held: 'held',
  credited: 'credited',
};

/** A ledger entry as the client sees it. */
export function toRewardRecord(e: LedgerEntry): RewardRecord {
  // Built field by field in the wire's order: spreading optional fields made an object each (a
  // record is built for every answer and every player event).
  const r: RewardRecord = {
    id: e.id,
    idempotencyKey: e.idempotencyKey,
    achievementId: e.achievementId,
    userId: e.userId,
    sats: e.sats,
    status: STATUS[e.state],
  } as RewardRecord;
  if (e.reason && e.state !== 'sending') r.reason = e.reason;
  if (e.paymentId) r.paymentId = e.paymentId;
  r.createdAt = new Date(e.createdAt).toISOString();
  if (e.settledAt) r.settledAt = new Date(e.settledAt).toISOString();
  if (e.kind === 'withdrawal') r.kind = 'withdrawal';
  return e.terms ? Object.assign(r, e.terms) : r;
}
