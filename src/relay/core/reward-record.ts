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
  const record: RewardRecord = {
    id: e.id,
    idempotencyKey: e.idempotencyKey,
    achievementId: e.achievementId,
    userId: e.userId,
    sats: e.sats,
    status: STATUS[e.state],
    ...(e.reason && e.state !== 'sending' ? { reason: e.reason } : {}),
    ...(e.paymentId ? { paymentId: e.paymentId } : {}),
    createdAt: new Date(e.createdAt).toISOString(),
    ...(e.settledAt ? { settledAt: new Date(e.settledAt).toISOString() } : {}),
    ...(e.kind === 'withdrawal' ? { kind: 'withdrawal' as const } : {}),
  };
  return e.terms ? Object.assign(record, e.terms) : record;
}
