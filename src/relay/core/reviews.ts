import type { AuditNote, ClaimLimits, Ledger, LedgerEntry } from './ports/ledger.js';
import type { Settlements } from './settlements.js';
import { isPrize, prizeLimits } from './tournament-decision.js';

/**
 * Whether an operator's approval still stands for a claim sent again under its key: the key's
 * entry was approved, then deferred by the service's outage before it left (`approvedSats`, its
 * sats then: approvedSatsOf), and the claim is decided at no more sats than that.
 * Then a hold does not stop it again (core/claims.ts; a streak's in the ledger, core/streak.ts).
 */
export const approvalCovers = (approvedSats: number | undefined, sats: number): boolean => approvedSats !== undefined && sats <= approvedSats;

/**
 * Whether an operator approved the entry (its audit trail says so). An approved entry that the
 * service's outage deferred before it left is not held again for the sats approved: read only
 * when a hold would stop an entry sent again.
 */
export async function approvedBefore(ledger: Pick<Ledger, 'audits'>, id: string): Promise<boolean> {
  return (await ledger.audits(id)).some((a) => a.fromState === 'held' && a.action === 'approve');
}

/**
 * The sats of the key's entry when an operator approved it and the service's outage then deferred
 * it before it left; else undefined. What a claim sent again under the key is held against
 * (approvalCovers).
 */
export async function approvedSatsOf(ledger: Pick<Ledger, 'find' | 'audits'>, userId: string, key: string): Promise<number | undefined> {
  const before = await ledger.find(userId, key);
  return before?.state === 'deferred' && (await approvedBefore(ledger, before.id)) ? before.sats : undefined;
}

/** Asks the payment-status endpoint and settles the entry when the service knows (payouts.settleByStatus). */
export type SettleByStatus = (entry: LedgerEntry, audit: AuditNote) => Promise<LedgerEntry | undefined>;

/** Pays an approved entry (now `sending`) through the service: payouts.pay with its title. */
export type PayApproved = (entry: LedgerEntry) => Promise<LedgerEntry>;

/**
 * What an operator can decide: about an intent awaiting review (reconcile, mark-paid,
 * mark-failed), or about one held for approval (approve: paid through the service; deny).
 */
export type ReviewAction = 'reconcile' | 'mark-paid' | 'mark-failed' | 'approve' | 'deny';
export const REVIEW_ACTIONS: readonly ReviewAction[] = ['reconcile', 'mark-paid', 'mark-failed', 'approve', 'deny'];
export const HELD_ACTIONS: readonly ReviewAction[] = ['approve', 'deny'];

export type ReviewOutcome =
  | { kind: 'settled'; entry: LedgerEntry }
  /** reconcile only: the service has not said how it ended, or there is no transaction id to ask about. */
  | { kind: 'unsettled'; entry: LedgerEntry; detail: string }
  /** No such intent awaits review, or is held for approval (or it was decided meanwhile). */
  | { kind: 'not_in_review' }
  /** approve only: the approval day's cap or budget has no room for it; it stays held. */
  | { kind: 'refused'; reason: 'user_daily_cap' | 'daily_budget' | 'address_daily_cap' };

/**
 * Decisions by hand, the same from the operator's page and the review command: each goes through
 * the settlement core with an audit record naming the operator, so the player hears of it.
 */
export function createReviews(
  settlements: Settlements,
  get: (id: string) => Promise<LedgerEntry | undefined>,
  settleByStatus: SettleByStatus,
  pay?: PayApproved,
  /** The limits a held claim approved on a later UTC day is checked against, on that day. */
  limits?: ClaimLimits,
) {
  /**
   * A held entry: approve is a compare-and-set held → sending (of two operators at once, one
   * wins; the other finds it no longer held), then one payment; deny frees its reservation.
   */
  async function decideHeld(id: string, action: 'approve' | 'deny', audit: AuditNote): Promise<ReviewOutcome> {
    if (action === 'deny') {
      const denied = await settlements.settle(id, { transition: 'deny', to: { state: 'rejected', reason: 'denied_by_operator' }, cause: 'operator', audit });
      return denied ? { kind: 'settled', entry: denied } : { kind: 'not_in_review' };
    }
    // A held credit goes on the player's balance; anything else is paid through the service.
    const held = await get(id);
    const credit = held?.kind === 'credit';
    if (!pay && !credit) throw new Error('approving a held claim needs the payments service');
    // Decided again on the day it is approved: a claim held since an earlier day counts on this one, if it fits
    // (a prize on that day's budget alone, as it was posted: no player's cap refuses it).
    const to = credit ? { state: 'credited' as const } : { state: 'sending' as const };
    const dayLimits = limits && held && isPrize(held) ? prizeLimits(limits) : limits;
    const approved = await settlements.apply(id, { transition: 'approve', to, cause: 'operator', audit, ...(dayLimits ? { limits: dayLimits } : {}) });
    if (approved.kind === 'refused') return { kind: 'refused', reason: approved.reason };
    if (approved.kind !== 'settled') return { kind: 'not_in_review' };
    return { kind: 'settled', entry: credit || !pay ? approved.entry : await pay(approved.entry) };
  }

  return async function decide(id: string, action: ReviewAction, actor: string, transactionId?: string): Promise<ReviewOutcome> {
    const entry = await get(id);
    const audit = { actor, action };
    if (action === 'approve' || action === 'deny') return entry?.state === 'held' ? decideHeld(id, action, audit) : { kind: 'not_in_review' };
    if (entry?.state !== 'needs_review') return { kind: 'not_in_review' };
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
      settled = await settlements.settle(id, { transition: action === 'mark-paid' ? 'mark_paid' : 'mark_failed', to, cause: 'operator', audit });
    }
    return settled ? { kind: 'settled', entry: settled } : { kind: 'not_in_review' };
  };
}

export type Reviews = ReturnType<typeof createReviews>;
