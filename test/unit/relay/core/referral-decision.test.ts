import { describe, expect, it } from 'vitest';
import { checkCatalog } from '../../../../src/relay/core/catalog.js';
import type { LedgerEntry } from '../../../../src/relay/core/ports/ledger.js';
import { linkAnswer, newReferralCode, qualifies, REFERRAL_CODE, referralKey, referrerCapped } from '../../../../src/relay/core/referral-decision.js';
import type { ReferralProgram } from '../../../../src/wire/relay-api.js';

const program: ReferralProgram = { id: 'invite', kind: 'referral', title: 'Invite', referrerSats: 100, refereeSats: 50, afterPlaySeconds: 60 };
const paid = (over: Partial<LedgerEntry> = {}): LedgerEntry =>
  ({ id: 'r', userId: 'bob', idempotencyKey: 'k', requestHash: 'h', achievementId: 'coin', sats: 10, state: 'paid', createdAt: 61_000, ...over }) as LedgerEntry;

describe('referral decisions', () => {
  it('codes are 10 URL-safe base32 characters, and differ', () => {
    const codes = new Set(Array.from({ length: 1000 }, newReferralCode));
    expect(codes.size).toBe(1000);
    for (const c of codes) expect(c).toMatch(REFERRAL_CODE);
  });

  it('answers a link in order: own code, not the first link, nobody’s code, the referrer’s address, else pending', () => {
    const base = { first: true, userId: 'bob', ownerId: 'alice', referrerWasHere: false };
    expect(linkAnswer(base)).toBe('pending');
    expect(linkAnswer({ ...base, ownerId: 'bob', first: false })).toBe('self_referral');
    expect(linkAnswer({ ...base, first: false })).toBe('not_new');
    expect(linkAnswer({ ...base, ownerId: undefined })).toBe('unknown_code');
    expect(linkAnswer({ ...base, referrerWasHere: true })).toBe('self_referral');
  });

  it('qualifies a payment (or credit) made afterPlaySeconds after the first link, of afterAchievement when named; never a referral reward or a withdrawal', () => {
    const ids = new Set(['invite']);
    expect(qualifies(program, 1_000, paid(), ids)).toBe(true);
    expect(qualifies(program, 1_000, paid({ createdAt: 60_999 }), ids)).toBe(false);
    expect(qualifies(program, 1_000, paid({ state: 'credited' }), ids)).toBe(true);
    for (const state of ['sending', 'held', 'rejected', 'failed', 'needs_review', 'deferred'] as const) expect(qualifies(program, 0, paid({ state }), ids)).toBe(false);
    expect(qualifies(program, 0, paid({ kind: 'withdrawal' }), ids)).toBe(false);
    expect(qualifies(program, 0, paid({ achievementId: 'invite' }), ids)).toBe(false);
    expect(qualifies(program, 0, paid({ terms: { referral: 'referee' } }), ids)).toBe(false);
    expect(qualifies({ ...program, afterAchievement: 'level' }, 0, paid(), ids)).toBe(false);
    expect(qualifies({ ...program, afterAchievement: 'level' }, 0, paid({ achievementId: 'level' }), ids)).toBe(true);
  });

  it('caps the referrer past perReferrerDaily qualified that day; keys are per referee, program and side', () => {
    expect(referrerCapped(4, 5)).toBe(false);
    expect(referrerCapped(5, 5)).toBe(true);
    expect(referrerCapped(1_000, undefined)).toBe(false);
    expect(referralKey(program, 'bob', 'referrer')).toBe('referral:invite:referrer:bob');
    expect(referralKey(program, 'bob', 'referee')).not.toBe(referralKey(program, 'bob', 'referrer'));
  });

  it('the catalog takes a referral program beside achievements, checking its fields and its afterAchievement', () => {
    const coin = { id: 'coin', title: 'Coin', sats: 10, repeat: { kind: 'once' } };
    expect(checkCatalog([coin, { ...program, afterAchievement: 'coin', perReferrerDaily: 5 }])).toEqual({
      entries: [coin, { ...program, afterAchievement: 'coin', perReferrerDaily: 5 }],
    });
    const bad = checkCatalog([coin, { ...program, referrerSats: 0, afterAchievement: 'nope' }]);
    expect('problems' in bad && bad.problems.join('\n')).toMatch(/achievements\[1\] \(id "invite"\): referrerSats must be at least 1/);
    const unknown = checkCatalog([coin, { ...program, afterAchievement: 'nope' }]);
    expect('problems' in unknown && unknown.problems).toEqual(['achievements[1] (id "invite"): afterAchievement must be the id of an achievement in the catalog']);
  });
});
