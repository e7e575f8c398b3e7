import type { Logger } from 'pino';
import { DESCRIPTION_MAX_LENGTH, msatsFromSats, type SendPaymentData } from '../../contract/payments-api.js';
import type { Outcome, PaymentsClient } from '../payments/client.js';
import { knownStatus, recipientOf, settlementOf, statusSettlement } from './payout-outcome.js';
import type { AuditNote, Ledger, LedgerEntry, Settlement } from './ports/ledger.js';
import type { Settlements } from './settlements.js';

/** Told at once when the service refuses a payment for the project wallet's balance (ops/wallet-balance.ts). */
export interface WalletWatch {
  noteInsufficientBalance(): void;
}
const NO_WALLET_WATCH: WalletWatch = { noteInsufficientBalance: () => undefined };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Pays committed intents through the service and settles them through the settlement core. A
 * payment is sent once per intent: an unclear answer becomes needs_review and is settled through
 * the payment-status endpoint, a late answer or an operator, never by sending again.
 */
export function createPayouts(ledger: Ledger, settlements: Settlements, payments: PaymentsClient, logger: Logger, wallet: WalletWatch = NO_WALLET_WATCH) {
  /** Lookups in flight, by userId. */
  const lookups = new Map<string, ReturnType<PaymentsClient['gamertagByUserId']>>();

  /**
   * Payments go to a gamertag, but a player can rename and someone else take the old name within
   * a second: the userId's gamertag is looked up right before each payment, never cached.
   * Payments to one player at the same moment (a batch, a backlog) share the lookup in flight:
   * it began at most one lookup's time before theirs would have, the same window that already
   * lies between any lookup and its payment.
   */
  async function currentGamertag(userId: string): Promise<Settlement | string> {
    let lookup = lookups.get(userId);
    if (!lookup) {
      lookup = payments.gamertagByUserId(userId).finally(() => lookups.delete(userId));
      lookups.set(userId, lookup);
    }
    const r = await lookup;
    const to = recipientOf(r);
    // Nothing was sent: no payment goes to a name the relay cannot even record.
    if (r.kind === 'ok' && typeof to !== 'string')
      logger.error(
        { event: 'malformed_answer', call: 'gamertag', userId, gamertag: JSON.stringify(r.data.gamertag).slice(0, 300) },
        'the service answered a gamertag the relay cannot use',
      );
    return to;
  }

  /** The settlement a payment's answer means for the entry it paid (core/payout-outcome.ts), and what it tells the log and the wallet's watch. */
  function answered(entry: LedgerEntry, r: Outcome<SendPaymentData>, gamertag?: string): Settlement | undefined {
    const to = settlementOf(r, { userId: entry.userId, gamertag });
    if (r.kind === 'ok' && to?.state === 'needs_review' && to.reason === 'malformed_answer')
      // Paid, perhaps: the id is logged as it came (escaped), and an operator settles it.
      logger.error(
        { event: 'malformed_answer', call: 'send_payment', rewardId: entry.id, transactionId: JSON.stringify(r.data.transactionId).slice(0, 300) },
        'the service answered a transaction id the relay cannot store',
      );
    if (r.kind === 'ok' && to?.state === 'needs_review' && to.reason === 'receiver_mismatch')
      logger.error({ event: 'receiver_mismatch', rewardId: entry.id, userId: entry.userId, receiverId: r.data.receiverId });
    // service_refused_key is logged by the payments client, once per refused call.
    if (to?.state === 'failed' && to.reason === 'insufficient_balance') wallet.noteInsufficientBalance();
    return to;
  }

  async function send(entry: LedgerEntry, title: string, onLate: (late: Promise<Outcome<SendPaymentData>>) => void): Promise<Settlement> {
    const gamertag = await currentGamertag(entry.userId);
    if (typeof gamertag !== 'string') return gamertag;
    // The recovery point: committed before the request leaves. A crash before it means nothing
    // reached the service (the intent is sent again); after it, the payment may have.
    let marked: boolean;
    try {
      marked = await settlements.send(entry);
    } catch (err) {
      // Nothing left: once the store is back, the intent is released for the client's retry.
      void release(entry);
      throw err;
    }
    if (!marked) return { state: 'needs_review', reason: 'lost_claim' };
    // The intent id travels in the description so an operator can find the payment upstream.
    const description = `${title} (rewardbus ${entry.id})`.slice(0, DESCRIPTION_MAX_LENGTH);
    const r = await payments.sendPayment({ gamertag, amount: msatsFromSats(entry.sats), description });
    if (r.kind === 'unclear' && r.late) onLate(r.late);
    return answered(entry, r, gamertag)!;
  }

  /**
   * A payment whose answer came after the timeout: it settles the review it went to (the
   * compare-and-set is the ledger's, so an operator's decision meanwhile stands).
   */
  async function settleLate(entry: LedgerEntry, late: Promise<Outcome<SendPaymentData>>) {
    const r = await late;
    const to = r.kind === 'ok' || r.kind === 'refused' ? answered(entry, r) : undefined;
    if (!to || to.state === 'deferred') return;
    if (await settlements.settle(entry.id, { transition: 'late_answer', to, cause: 'late_answer' })) return;
    await contradictIfWrong(entry, to, 'late_answer', `late answer: ${to.state}`);
  }

  /**
   * Settled meanwhile (an operator, the payment-status endpoint). When the service's own answer
   * says otherwise, the record must not stay wrong in silence: back to review, marked, audited.
   */
  async function contradictIfWrong(entry: LedgerEntry, to: Settlement, cause: 'late_answer' | 'payout', action: string) {
    const now = await ledger.get(entry.id);
    if (!now || !contradicts(now, to)) return;
    await settlements.settle(entry.id, {
      transition: 'contradict',
      to: { state: 'needs_review', reason: 'contradicted', ...('paymentId' in to && to.paymentId ? { paymentId: to.paymentId } : {}) },
      cause,
      audit: { actor: 'payments-service', action },
    });
  }

  /** A final decision the service's answer disagrees with: paid where it refused, or not paid where it paid. */
  function contradicts(entry: LedgerEntry, answer: Settlement): boolean {
    if (answer.state === 'paid') return entry.state === 'failed' || entry.state === 'rejected';
    if (answer.state === 'failed') return entry.state === 'paid';
    return false;
  }

  /** The lifecycle's `release`: a payment that never left goes back to the client's retry (a compare-and-set on its phase). */
  const releaseUnsent = (entry: LedgerEntry) =>
    settlements.settle(entry.id, { transition: 'release', to: { state: 'deferred', reason: 'interrupted_before_send' }, cause: 'recovery' });

  const inFlight = new Set<Promise<LedgerEntry>>();

  /** Pays a `sending` entry and records how it ended. */
  function pay(entry: LedgerEntry, title: string): Promise<LedgerEntry> {
    const p = payAndSettle(entry, title).finally(() => inFlight.delete(p));
    inFlight.add(p);
    return p;
  }

  /**
   * The payment's outcome could not be recorded (the store failed after the service answered): it
   * is logged at once, transaction id and all, and recorded as soon as the store is back. Until
   * then the entry stays sending (a retry of its key is told it is in flight), and if this relay
   * dies first, the log line is how an operator settles it.
   */
  async function keepTrying(entry: LedgerEntry, to: Settlement, err: unknown) {
    logger.error(
      {
        event: 'settlement_not_recorded',
        rewardId: entry.id,
        userId: entry.userId,
        to: to.state,
        ...('paymentId' in to && to.paymentId ? { paymentId: to.paymentId } : {}),
        err: { message: (err as Error).message },
      },
      'the payment is done but the ledger could not record it: retrying',
    );
    for (let wait = 500; wait <= 64_000; wait *= 2) {
      await sleep(wait);
      try {
        // Recovery may have put it in review meanwhile: what the service said still settles it.
        if (await settlements.settle(entry.id, { transition: 'record', to, cause: 'payout' })) return;
        // Decided meanwhile (another relay's recovery put it in review, then an operator): the
        // service's answer, when it says otherwise, sends it back to review, as a late answer does.
        await contradictIfWrong(entry, to, 'payout', `answer recorded late: ${to.state}`);
        return;
      } catch {
        // Still down: wait longer.
      }
    }
  }

  /** Releases an intent whose payment never left, as soon as the store answers (a compare-and-set on its phase). */
  async function release(entry: LedgerEntry) {
    for (let wait = 500; wait <= 64_000; wait *= 2) {
      await sleep(wait);
      try {
        await releaseUnsent(entry);
        return;
      } catch {
        // Still down: wait longer.
      }
    }
  }

  async function payAndSettle(entry: LedgerEntry, title: string): Promise<LedgerEntry> {
    let late: Promise<Outcome<SendPaymentData>> | undefined;
    const to = await send(entry, title, (l) => (late = l));
    let recorded: LedgerEntry | undefined;
    try {
      recorded = await settlements.settle(entry.id, { transition: 'settle', to, cause: 'payout' });
    } catch (err) {
      const retrying: Promise<LedgerEntry> = keepTrying(entry, to, err)
        .then(() => entry)
        .finally(() => inFlight.delete(retrying));
      inFlight.add(retrying);
      throw err;
    }
    const settled = recorded ?? (await ledger.get(entry.id)) ?? entry;
    // Listened to only once the review it settles is committed.
    if (late) void settleLate(entry, late).catch((err: unknown) => logger.error({ err, rewardId: entry.id }, 'late answer not recorded'));
    return settled;
  }

  /**
   * Asks the payment-status endpoint about one needs_review entry with a transaction id, and
   * settles it when the service says how it ended. Returns the settled entry, or undefined.
   */
  async function settleByStatus(entry: LedgerEntry, audit?: AuditNote): Promise<LedgerEntry | undefined> {
    if (!entry.paymentId) return undefined;
    const r = await payments.transaction(entry.paymentId);
    if (r.kind === 'ok' && !knownStatus(r))
      // Stays in review: a word the relay does not know may mean the payment left.
      logger.error(
        { event: 'unknown_payment_status', rewardId: entry.id, paymentId: entry.paymentId, status: JSON.stringify(r.data.status ?? null).slice(0, 100) },
        'the payment-status endpoint answered a status the relay does not know: the reward stays in review',
      );
    const to = statusSettlement(r, entry.paymentId);
    if (!to) return undefined;
    return settlements.settle(entry.id, { transition: 'reconcile', to, cause: 'reconcile', ...(audit ? { audit } : {}) });
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
      if (entry.phase === 'claimed' && (await releaseUnsent(entry))) continue;
      if (await settlements.settle(entry.id, { transition: 'interrupt', to: { state: 'needs_review', reason: 'interrupted' }, cause: 'recovery' })) n++;
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
