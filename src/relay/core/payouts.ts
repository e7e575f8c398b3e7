import type { Logger } from 'pino';
import type { AuditNote, Ledger, LedgerEntry, Settlement } from '../store/ledger.js';
import { DESCRIPTION_MAX_LENGTH, MESSAGES, msatsFromSats } from '../../contract/payments-api.js';
import type { SendPaymentData } from '../../contract/payments-api.js';
import type { Metrics } from '../ops/metrics.js';
import type { Outcome, PaymentsClient } from '../payments/client.js';

/**
 * Pays committed intents through the service and settles them in the ledger. A payment is
 * sent once per intent: an unclear answer becomes needs_review and is settled through the
 * payment-status endpoint or by an operator, never by sending again.
 */
export function createPayouts(ledger: Ledger, payments: PaymentsClient, logger: Logger, metrics?: Pick<Metrics, 'settled'>) {
  /**
   * Payments go to a gamertag, but a player can rename and someone else take the old name within
   * a second: the userId's gamertag is looked up right before each payment, never cached.
   */
  async function currentGamertag(userId: string): Promise<Settlement | string> {
    const r = await payments.gamertagByUserId(userId);
    if (r.kind === 'ok') return r.data.gamertag;
    if (r.kind === 'refused' && r.status < 500 && r.status !== 401 && r.status !== 403) return { state: 'failed', reason: 'unknown_user' };
    return { state: 'deferred', reason: r.kind === 'refused' ? `service_refused_${r.status}` : r.reason };
  }

  async function settlementFor(entry: LedgerEntry, title: string, onLate: (late: Promise<Outcome<SendPaymentData>>) => void): Promise<Settlement> {
    const gamertag = await currentGamertag(entry.userId);
    if (typeof gamertag !== 'string') return gamertag;
    // The recovery point: committed before the request leaves. A crash before it means nothing
    // reached the service (the intent is sent again); after it, the payment may have.
    if (!(await ledger.markSent(entry.id))) return { state: 'needs_review', reason: 'lost_claim' };
    // The intent id travels in the description so an operator can find the payment upstream.
    const description = `${title} (rewardbus ${entry.id})`.slice(0, DESCRIPTION_MAX_LENGTH);
    const r = await payments.sendPayment({ gamertag, amount: msatsFromSats(entry.sats), description });
    switch (r.kind) {
      case 'ok':
        if (r.data.receiverId && r.data.receiverId !== entry.userId) {
          logger.error({ event: 'receiver_mismatch', rewardId: entry.id, userId: entry.userId, receiverId: r.data.receiverId });
          return { state: 'needs_review', reason: 'receiver_mismatch', paymentId: r.data.transactionId, gamertag };
        }
        return r.data.status === 'settled'
          ? { state: 'paid', paymentId: r.data.transactionId, gamertag }
          : { state: 'needs_review', reason: `payment_${r.data.status}`, paymentId: r.data.transactionId, gamertag };
      case 'refused':
        if (r.status === 401 || r.status === 403) {
          logger.error({ event: 'service_refused_key', status: r.status, message: r.message }, 'the payments service refused the API key');
          return { state: 'deferred', reason: `service_refused_${r.status}` };
        }
        if (r.message === MESSAGES.noUser) return { state: 'failed', reason: 'unknown_gamertag', gamertag };
        if (r.message === MESSAGES.insufficientBalance) return { state: 'failed', reason: 'insufficient_balance', gamertag };
        return { state: 'failed', reason: 'payment_refused', gamertag };
      case 'unavailable':
        return { state: 'deferred', reason: r.reason };
      case 'unclear':
        if (r.late) onLate(r.late);
        return { state: 'needs_review', reason: r.reason, gamertag };
    }
  }

  /**
   * A payment whose answer came after the timeout: it settles the review it went to (the
   * compare-and-set is the ledger's, so an operator's decision meanwhile stands).
   */
  async function settleLate(entry: LedgerEntry, late: Promise<Outcome<SendPaymentData>>) {
    const r = await late;
    const to: Settlement | undefined =
      r.kind === 'ok'
        ? r.data.status === 'settled' && (!r.data.receiverId || r.data.receiverId === entry.userId)
          ? { state: 'paid', paymentId: r.data.transactionId }
          : { state: 'needs_review', reason: r.data.status === 'settled' ? 'receiver_mismatch' : `payment_${r.data.status}`, paymentId: r.data.transactionId }
        : r.kind === 'refused'
          ? { state: 'failed', reason: 'payment_refused' }
          : undefined;
    if (!to || !(await ledger.settle(entry.id, ['needs_review'], to))) return;
    metrics?.settled(to.state, entry.achievementId, entry.sats);
    logger.info({ event: 'settled_late', rewardId: entry.id, userId: entry.userId, state: to.state, paymentId: 'paymentId' in to ? to.paymentId : undefined });
  }

  const inFlight = new Set<Promise<LedgerEntry>>();

  /** Pays a `sending` entry and records how it ended. */
  function pay(entry: LedgerEntry, title: string): Promise<LedgerEntry> {
    const p = payAndSettle(entry, title).finally(() => inFlight.delete(p));
    inFlight.add(p);
    return p;
  }

  async function payAndSettle(entry: LedgerEntry, title: string): Promise<LedgerEntry> {
    let late: Promise<Outcome<SendPaymentData>> | undefined;
    const settlement = await settlementFor(entry, title, (l) => (late = l));
    const settled = (await ledger.settle(entry.id, ['sending'], settlement)) ?? (await ledger.get(entry.id)) ?? entry;
    // Listened to only once the review it settles is committed.
    if (late) void settleLate(entry, late);
    const fields = { rewardId: entry.id, userId: entry.userId, achievementId: entry.achievementId, sats: entry.sats };
    if (settled.state !== 'sending' && settled.state !== 'deferred') metrics?.settled(settled.state, entry.achievementId, entry.sats, entry.createdAt);
    if (settled.state === 'paid') logger.info({ event: 'payout', ...fields, paymentId: settled.paymentId }, 'paid');
    else logger.warn({ event: `payout_${settled.state}`, ...fields, reason: settled.reason, paymentId: settled.paymentId });
    return settled;
  }

  /**
   * Asks the payment-status endpoint about one needs_review entry with a transaction id, and
   * settles it when the service says how it ended. Returns the settled entry, or undefined.
   */
  async function settleByStatus(entry: LedgerEntry, audit?: AuditNote): Promise<LedgerEntry | undefined> {
    if (!entry.paymentId) return undefined;
    const r = await payments.transaction(entry.paymentId);
    if (r.kind !== 'ok' || r.data.status === 'TRANSACTION_STATUS_PENDING') return undefined;
    const to: Settlement = r.data.status === 'TRANSACTION_STATUS_COMPLETED' ? { state: 'paid', paymentId: entry.paymentId } : { state: 'failed', reason: 'payment_failed' };
    const settled = await ledger.settle(entry.id, ['needs_review'], to, Date.now(), audit);
    if (!settled) return undefined;
    metrics?.settled(to.state, entry.achievementId, entry.sats);
    logger.info({ event: 'reconciled', rewardId: entry.id, userId: entry.userId, state: to.state, paymentId: entry.paymentId, by: audit?.actor });
    return settled;
  }

  /** Settles needs_review entries whose transaction id is known, through the payment-status endpoint. */
  async function reconcile(): Promise<{ settled: number; open: number }> {
    const open = await ledger.inState('needs_review');
    let settled = 0;
    for (const entry of open) if (await settleByStatus(entry)) settled++;
    return { settled, open: open.length - settled };
  }

  /**
   * After a crash: an intent caught before its payment left goes back to be sent (deferred: the
   * client's retry with the same key claims it again); one caught after may have been paid, so
   * it goes to review, never out again. Returns how many went to review.
   */
  async function recover(startedAt: number): Promise<number> {
    let n = 0;
    for (const entry of await ledger.abandoned(Date.now(), startedAt)) {
      // Both moves are the ledger's compare-and-sets: a relay still at work on it wins.
      const released = entry.phase === 'claimed' && (await ledger.releaseUnsent(entry.id));
      if (released) {
        logger.warn({ event: 'payout_deferred', rewardId: entry.id, userId: entry.userId, reason: released.reason });
        continue;
      }
      if (!(await ledger.settle(entry.id, ['sending'], { state: 'needs_review', reason: 'interrupted' }))) continue;
      n++;
      logger.warn({ event: 'payout_needs_review', rewardId: entry.id, userId: entry.userId, reason: 'interrupted' });
    }
    return n;
  }

  /** Waits for payments in flight to be settled (each ends by the client's timeout at the latest). */
  async function drain(): Promise<void> {
    await Promise.allSettled([...inFlight]);
  }

  return { pay, reconcile, settleByStatus, recover, drain };
}

export type Payouts = ReturnType<typeof createPayouts>;
