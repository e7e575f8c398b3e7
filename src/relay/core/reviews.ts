import type { AuditNote, LedgerEntry } from '../store/ledger.js';
import type { Settlements } from './settlements.js';

/** Asks the payment-status endpoint and settles the entry when the service knows (payouts.settleByStatus). */
export type SettleByStatus = (entry: LedgerEntry, audit: AuditNote) => Promise<LedgerEntry | undefined>;

/** What an operator can decide about an intent awaiting review. */
export type ReviewAction = 'reconcile' | 'mark-paid' | 'mark-failed';
export const REVIEW_ACTIONS: readonly ReviewAction[] = ['reconcile', 'mark-paid', 'mark-failed'];

export type ReviewOutcome =
  | { kind: 'settled'; entry: LedgerEntry }
  /** reconcile only: the service has not said how it ended, or there is no transaction id to ask about. */
  | { kind: 'unsettled'; entry: LedgerEntry; detail: string }
  /** No such intent awaits review (or it was settled meanwhile). */
  | { kind: 'not_in_review' };

/**
 * Decisions by hand, the same from the operator's page and the review command: each goes through
 * the settlement core with an audit record naming the operator, so the player hears of it.
 */
export function createReviews(settlements: Settlements, get: (id: string) => Promise<LedgerEntry | undefined>, settleByStatus: SettleByStatus) {
  return async function decide(id: string, action: ReviewAction, actor: string, transactionId?: string): Promise<ReviewOutcome> {
    const entry = await get(id);
    if (entry?.state !== 'needs_review') return { kind: 'not_in_review' };
    const audit = { actor, action };
    let settled: LedgerEntry | undefined;
    if (action === 'reconcile') {
      settled = await settleByStatus(entry, audit);
      if (!settled) {
        const current = await get(id);
        if (current && current.state !== 'needs_review') return { kind: 'not_in_review' };
        return { kind: 'unsettled', entry, detail: entry.paymentId ? 'The service has not said how it ended' : 'No transaction id: ask the service, then mark it' };
      }
    } else {
      const to =
        action === 'mark-paid'
          ? { state: 'paid' as const, paymentId: transactionId ?? `operator:${new Date().toISOString()}` }
          : { state: 'failed' as const, reason: 'operator_marked_failed' };
      settled = await settlements.settle(id, { from: ['needs_review'], to, cause: 'operator', audit });
    }
    return settled ? { kind: 'settled', entry: settled } : { kind: 'not_in_review' };
  };
}

export type Reviews = ReturnType<typeof createReviews>;
