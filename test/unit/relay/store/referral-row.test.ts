import { describe, expect, it } from 'vitest';
import { referralOf } from '../../../../src/relay/store/referral-row.js';

describe('a referral row as the port says it, from either ledger', () => {
  it('reads PostgreSQL’s bigints as strings and booleans, and SQLite’s numbers, to the same referral', () => {
    const common = { program_id: 'invite', referee_id: 'u-2', referrer_id: 'u-1', state: 'qualified' as const, reason: null };
    const pg = referralOf({ ...common, linked_at: '1764115200000', qualified_at: '1764118800000', referrer_capped: true, rewarded: false });
    const sqlite = referralOf({ ...common, linked_at: 1_764_115_200_000, qualified_at: 1_764_118_800_000, referrer_capped: 1, rewarded: 0 });
    expect(pg).toEqual({
      programId: 'invite',
      refereeId: 'u-2',
      referrerId: 'u-1',
      state: 'qualified',
      linkedAt: 1_764_115_200_000,
      qualifiedAt: 1_764_118_800_000,
      referrerCapped: true,
      rewarded: false,
    });
    expect(sqlite).toEqual(pg);
  });

  it('leaves out what the row does not hold (no referrer, no reason, not qualified)', () => {
    const r = referralOf({
      program_id: 'invite',
      referee_id: 'u-2',
      referrer_id: null,
      state: 'refused',
      reason: 'self_referral',
      linked_at: 5,
      qualified_at: null,
      referrer_capped: 0,
      rewarded: 0,
    });
    expect(r).toEqual({ programId: 'invite', refereeId: 'u-2', state: 'refused', reason: 'self_referral', linkedAt: 5, referrerCapped: false, rewarded: false });
  });
});
