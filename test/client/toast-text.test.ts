import { describe, expect, it } from 'vitest';
import type { RewardOutcome } from '../../src/client/events.js';
import { toastText } from '../../src/phaser/toast-text.js';

const outcome = (o: Partial<RewardOutcome> = {}): RewardOutcome => ({
  intent: { id: 'k1', achievementId: 'first-coin', occurredAt: '2026-11-23T10:00:00.000Z', attempts: 1, nextAttemptAt: 0 },
  sats: 21,
  gamertag: 'alice',
  remote: false,
  ...o,
});

describe("the Phaser plugin's toast text", () => {
  it('says a payment, and a payment after review as that one', () => {
    expect(toastText('reward:paid', outcome(), 'First coin')).toBe('+21 sats · First coin → alice');
    expect(toastText('reward:paid', outcome({ afterReview: true }), 'First coin')).toBe('+21 sats · First coin — paid after review');
  });

  it('says a failure after review likewise, with the reason in words', () => {
    expect(toastText('reward:failed', outcome({ reason: 'insufficient_balance' }), 'First coin')).toBe('Payout failed for First coin: the game is out of sats');
    expect(toastText('reward:failed', outcome({ reason: 'payment_failed', afterReview: true }), 'First coin')).toBe('Payout failed for First coin after review: payment_failed');
  });

  it('says a refusal and a check', () => {
    expect(toastText('reward:rejected', outcome({ reason: 'cooldown' }), 'First coin')).toBe('No sats for First coin: too soon');
    expect(toastText('reward:review', outcome(), 'First coin')).toBe('21 sats for First coin are being checked');
  });
});
