import type { Logger } from 'pino';
import type { PlayerEvent } from '../store/event-log.js';
import type { AuditNote, ClaimLimits, ClaimResult, Ledger, LedgerEntry, LedgerState, NewClaim, Settled, Settlement } from '../store/ledger.js';

/** What moved an intent: the claim, the payment's answer, or one of the ways a review ends. */
export type SettlementCause = 'claim' | 'payout' | 'late_answer' | 'reconcile' | 'recovery' | 'operator';

/** The metrics a settlement records (ops/metrics.ts; a no-op without the operator's surface). */
export interface SettlementMetrics {
  settled(state: LedgerState, achievementId: string, sats: number, sinceMs?: number): void;
  /** The service's answer disagreed with a final decision (see payouts' late answers). */
  contradicted?(): void;
}

export interface SettlementsDeps {
  ledger: Ledger;
  /** Live delivery to this relay's streams; a shared log delivers through its own subscription. */
  publish: (event: PlayerEvent) => void;
  metrics: SettlementMetrics;
  logger: Logger;
}

export interface SettleRequest {
  from: readonly LedgerState[];
  to: Settlement;
  cause: SettlementCause;
  /** A decision by hand: audited with who and how, in the settlement's transaction. */
  audit?: AuditNote;
  now?: number;
}

/**
 * The one path by which an intent changes state. Each change is one store transaction (the ledger
 * row, the audit row for decisions by hand, the player's `reward` event); after its commit, and
 * only from what was committed, the event is published to live streams, the metrics recorded
 * and the change logged. Nothing else in the relay settles an entry or appends a reward event.
 */
export function createSettlements({ ledger, publish, metrics, logger }: SettlementsDeps) {
  function after(s: Settled, cause: SettlementCause, audit?: AuditNote) {
    const { entry, from, event } = s;
    if (event) publish(event);
    if (entry.state !== 'sending' && entry.state !== 'deferred' && entry.state !== 'held') metrics.settled(entry.state, entry.achievementId, entry.sats, cause === 'payout' ? entry.createdAt : undefined);
    const line = {
      event: 'settlement',
      cause,
      rewardId: entry.id,
      userId: entry.userId,
      achievementId: entry.achievementId,
      sats: entry.sats,
      from,
      to: entry.state,
      ...(entry.reason && entry.state !== 'paid' ? { reason: entry.reason } : {}),
      ...(entry.paymentId ? { paymentId: entry.paymentId } : {}),
      ...(audit ? { by: audit.actor, action: audit.action } : {}),
    };
    if (entry.reason === 'contradicted' && entry.state === 'needs_review') {
      metrics.contradicted?.();
      logger.error(line, 'the payments service contradicts a final decision: back to review');
    } else if (entry.state === 'paid' || entry.state === 'rejected' || entry.state === 'sending' || entry.state === 'held') logger.info(line, entry.state);
    else logger.warn(line, entry.state);
  }

  return {
    /** Records a claim (sending; rejected or held, and told; deferred too early); a known key comes back untouched. */
    async claim(claim: NewClaim, limits: ClaimLimits): Promise<ClaimResult> {
      const r = await ledger.claim(claim, limits);
      if (r.kind === 'created' && (r.entry.state === 'rejected' || r.entry.state === 'held')) after({ entry: r.entry, from: 'sending', ...(r.event ? { event: r.event } : {}) }, 'claim');
      return r;
    },

    /** Moves an entry on from `from` (a compare-and-set); undefined when it was no longer there. */
    async settle(id: string, request: SettleRequest): Promise<LedgerEntry | undefined> {
      const s = await ledger.settle(id, request.from, request.to, { ...(request.now ? { now: request.now } : {}), ...(request.audit ? { audit: request.audit } : {}) });
      if (!s) return undefined;
      after(s, request.cause, request.audit);
      return s.entry;
    },

    /** After a crash: an abandoned entry whose payment never left is deferred (the client's retry claims it again). */
    async releaseUnsent(id: string): Promise<LedgerEntry | undefined> {
      const s = await ledger.releaseUnsent(id);
      if (!s) return undefined;
      after(s, 'recovery');
      return s.entry;
    },
  };
}

export type Settlements = ReturnType<typeof createSettlements>;
