import type { Logger } from 'pino';
import type { PayoutMode } from '../../wire/relay-api.js';
import type { Catalog } from './catalog.js';
import type { Payouts } from './payouts.js';
import type { ClaimLimits, Ledger } from './ports/ledger.js';
import { approvedBefore } from './reviews.js';
import type { Settlements } from './settlements.js';
import { PRIZE_KEY_PREFIX, prizeLimits } from './tournament-decision.js';

export interface PrizeRedeliveryDeps {
  ledger: Pick<Ledger, 'inState' | 'audits'>;
  settlements: Pick<Settlements, 'claim'>;
  payouts: Pick<Payouts, 'pay'>;
  catalog: Catalog;
  limits: ClaimLimits;
  logger: Pick<Logger, 'error' | 'info'>;
  holdAboveSats: number;
  payoutMode: PayoutMode;
}

/**
 * A prize whose payment could not leave (the service out of reach, the relay stopped before it
 * sent) is deferred: nothing paid, nothing reserved. A claim's client sends it again under its
 * key; a prize has no client, so the relay does, under the prize's own key and request hash: the
 * ledger claims the deferred key again (the lifecycle's `claim` from `deferred`), decided whole on
 * today's budget, and pays it. Never a second payment: the key is the prize's, and only a deferred
 * entry (one that was never sent) is claimed again. A player's cap never refuses a prize (the
 * game's server awarded it), as when it was posted. A prize an operator approved is not held
 * again: its sats are the ones approved (a prize keeps its amount), and only the service's outage
 * stopped it.
 */
export function createPrizeRedelivery({ ledger, settlements, payouts, catalog, limits, logger, holdAboveSats, payoutMode }: PrizeRedeliveryDeps) {
  // The day's budget alone, as the post decided it: no player's cap, nor an operator's denial of another prize (denied_recently).
  const limitsOfPrizes = prizeLimits(limits);
  return async function redeliverPrizes(): Promise<number> {
    let sent = 0;
    for (const e of await ledger.inState('deferred')) {
      const tournament = e.idempotencyKey.startsWith(PRIZE_KEY_PREFIX) ? catalog.tournaments?.get(e.achievementId) : undefined;
      if (!tournament) continue;
      const credit = (tournament.payout ?? payoutMode) === 'balance';
      const hold = (tournament.hold || (holdAboveSats > 0 && e.sats > holdAboveSats)) && !(await approvedBefore(ledger, e.id));
      const r = await settlements.claim(
        {
          id: e.id,
          userId: e.userId,
          idempotencyKey: e.idempotencyKey,
          requestHash: e.requestHash,
          achievementId: e.achievementId,
          sats: e.sats,
          // The prize's place decides it, not a repeat rule: a player may win every period.
          repeat: { kind: 'cooldown', seconds: 0 },
          ...(e.terms ? { terms: e.terms } : {}),
          ...(hold ? { hold: true } : {}),
          ...(credit ? { credit: true } : {}),
        },
        limitsOfPrizes,
      );
      if (r.kind !== 'created' || r.entry.state !== 'sending') continue;
      sent++;
      void payouts.pay(r.entry, tournament.title).catch((err: unknown) => logger.error({ err, rewardId: r.entry.id }, 'prize payment not settled'));
    }
    if (sent) logger.info({ event: 'prizes_redelivered', sent }, 'deferred prizes sent again');
    return sent;
  };
}
