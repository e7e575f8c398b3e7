import { describe, expect, it } from 'vitest';
import type { RewardOutcome } from '../../../src/client/events.js';
import { gamertagWaitText, refusalText, toastText, waitingText, withdrawalText } from '../../../src/phaser/toast-text.js';

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

  it('says the dollar value beside the sats when the game asks (showUsd) and the relay recorded one', () => {
    const record = { id: 'r1', achievementId: 'gem', userId: 'u1', sats: 77, status: 'paid' as const, createdAt: '2026-11-26T00:00:00.000Z', usd: 0.05, btcUsd: 65_000 };
    const priced = outcome({ sats: 77, record });
    expect(toastText('reward:paid', priced, 'Gem', undefined, true)).toBe('+77 sats ($0.05) · Gem → alice');
    expect(toastText('reward:held', priced, 'Gem', undefined, true)).toBe('77 sats ($0.05) for Gem are waiting for approval');
    expect(toastText('reward:paid', priced, 'Gem')).toBe('+77 sats · Gem → alice');
    expect(toastText('reward:paid', outcome(), 'First coin', undefined, true)).toBe('+21 sats · First coin → alice');
  });

  it("says a tournament prize's and a streak step's dollars beside their sats as any reward's (showUsd)", () => {
    const base = { userId: 'u1', status: 'paid' as const, createdAt: '2026-11-26T00:00:00.000Z', btcUsd: 65_000 };
    const prize = outcome({ sats: 15_385, record: { ...base, id: 'p1', achievementId: 'cup', sats: 15_385, usd: 10, place: 1, period: '2026-W48' } });
    expect(toastText('reward:paid', prize, 'Cup', undefined, true)).toBe('🏆 1st place · Cup · +15,385 sats ($10)');
    expect(toastText('reward:credited', prize, 'Cup', 90_000, true)).toBe('🏆 1st place · Cup · +15,385 sats ($10)');
    expect(toastText('reward:paid', prize, 'Cup')).toBe('🏆 1st place · Cup · +15,385 sats');
    const step = outcome({ sats: 154, record: { ...base, id: 's3', achievementId: 'login', sats: 154, usd: 0.1, streakDay: 3 } });
    expect(toastText('reward:paid', step, 'Login streak', undefined, true)).toBe('Day 3 streak · +154 sats ($0.1)');
    expect(toastText('reward:paid', step, 'Login streak')).toBe('Day 3 streak · +154 sats');
  });

  it('says a failure after review likewise, with the reason in words', () => {
    expect(toastText('reward:failed', outcome({ reason: 'insufficient_balance' }), 'First coin')).toBe('Payout failed for First coin: the game is out of sats');
    expect(toastText('reward:failed', outcome({ reason: 'payment_failed', afterReview: true }), 'First coin')).toBe('Payout failed for First coin after review: payment_failed');
  });

  it("says a tournament's prize by its place, paid or credited (issue 37)", () => {
    const prize = (place: number, sats: number) =>
      outcome({ sats, record: { id: 'r', achievementId: 'cup', userId: 'u', sats, status: 'paid', createdAt: '2026-11-23T10:00:00.000Z', place, period: '2026-W48' } });
    expect(toastText('reward:paid', prize(2, 5_000), 'Weekly cup')).toBe('🏆 2nd place · Weekly cup · +5,000 sats');
    expect(toastText('reward:credited', prize(1, 10_000), 'Weekly cup')).toBe('🏆 1st place · Weekly cup · +10,000 sats');
    expect([3, 4, 11, 12, 13, 21, 22, 101, 111].map((n) => toastText('reward:paid', prize(n, 1), 'Cup').split(' ')[1])).toEqual([
      '3rd',
      '4th',
      '11th',
      '12th',
      '13th',
      '21st',
      '22nd',
      '101st',
      '111th',
    ]);
    // Held for an operator: said as any held reward.
    expect(toastText('reward:held', prize(1, 10_000), 'Weekly cup')).toBe('10000 sats for Weekly cup are waiting for approval');
  });

  it('says a credit with the balance after it (balance mode)', () => {
    expect(toastText('reward:credited', outcome(), 'First coin', 52)).toBe('+21 sats · First coin · balance 52');
    expect(toastText('reward:credited', outcome(), 'First coin')).toBe('+21 sats · First coin');
  });

  it("says a login streak's day with the sats it paid (its record's streakDay), paid, credited or after review", () => {
    const record = { id: 'r1', achievementId: 'login', userId: 'u1', sats: 30, status: 'paid' as const, createdAt: '2026-11-25T10:00:00.000Z', streakDay: 3 };
    const day3 = outcome({ intent: { ...outcome().intent, achievementId: 'login' }, record, sats: 30 });
    expect(toastText('reward:paid', day3, 'Daily login')).toBe('Day 3 streak · +30 sats');
    expect(toastText('reward:credited', { ...day3, record: { ...record, status: 'credited' } }, 'Daily login', 60)).toBe('Day 3 streak · +30 sats · balance 60');
    expect(toastText('reward:paid', { ...day3, afterReview: true, afterHold: true }, 'Daily login')).toBe('Day 3 streak · +30 sats — paid after approval');
    // Refused the same day: said as any refusal.
    expect(toastText('reward:rejected', { ...day3, reason: 'already_claimed_today' }, 'Daily login')).toBe('No sats for Daily login: already earned today');
  });

  it('says a withdrawal paid, failed or waiting, and why one was refused', () => {
    const w = (status: 'paid' | 'failed' | 'held' | 'needs_review', reason?: string) => ({
      withdrawal: { id: 'w1', sats: 500, status, createdAt: '2026-11-25T10:00:00.000Z', ...(reason ? { reason } : {}) },
      gamertag: 'ada',
      remote: false,
    });
    expect(withdrawalText('withdrawal:paid', w('paid'))).toBe('Withdrew 500 sats → ada');
    expect(withdrawalText('withdrawal:failed', w('failed', 'denied_by_operator'))).toBe('Withdrawal of 500 sats failed: not approved; the sats are back');
    expect(withdrawalText('withdrawal:review', w('held'))).toBe('Withdrawal of 500 sats is waiting for approval');
    expect(withdrawalText('withdrawal:review', w('needs_review'))).toBe('Withdrawal of 500 sats is being checked');
    expect(refusalText('below_minimum')).toBe('Cannot withdraw: below the minimum');
    expect(refusalText('something_else')).toBe('Cannot withdraw: something else');
  });

  it('says a refusal and a check', () => {
    expect(toastText('reward:rejected', outcome({ reason: 'cooldown' }), 'First coin')).toBe('No sats for First coin: too soon');
    expect(toastText('reward:review', outcome(), 'First coin')).toBe('21 sats for First coin are being checked');
  });

  it('says a hold, and its approval or denial as that one', () => {
    expect(toastText('reward:held', outcome(), 'First coin')).toBe('21 sats for First coin are waiting for approval');
    expect(toastText('reward:paid', outcome({ afterReview: true, afterHold: true }), 'First coin')).toBe('+21 sats · First coin — paid after approval');
    expect(toastText('reward:rejected', outcome({ reason: 'denied_by_operator', afterReview: true, afterHold: true }), 'First coin')).toBe('No sats for First coin: not approved');
    expect(toastText('reward:rejected', outcome({ reason: 'denied_recently' }), 'First coin')).toBe('No sats for First coin: not approved recently');
  });

  it('says how much play a reward sent too early needs, or else when it will be paid', () => {
    expect(waitingText('Level complete', 12_000, 400, 20)).toBe('Level complete: 20 s of play needed');
    expect(waitingText('Level complete', 12_000, 400)).toBe('Level complete: paid in 12 s');
    expect(waitingText('Level complete', 1_000, 999)).toBe('Level complete: paid in 1 s');
  });

  it("says a guest's reward paid at once is kept for the gamertag it has yet to claim its sats with", () => {
    expect(gamertagWaitText('Gem')).toBe('Gem: saved, paid once you claim your sats with a gamertag');
  });
});
