import type { Referral, ReferralState } from '../core/ports/referral-store.js';

/**
 * A referral as both SQL backends store it: PostgreSQL hands bigints back as strings and its flags
 * as booleans (`ReferralRow<boolean>`), SQLite numbers for both (`ReferralRow<number>`).
 */
export interface ReferralRow<Flag extends boolean | number = boolean | number> {
  program_id: string;
  referee_id: string;
  referrer_id: string | null;
  state: ReferralState;
  reason: string | null;
  linked_at: string | number;
  qualified_at: string | number | null;
  referrer_capped: Flag;
  rewarded: Flag;
}

/**
 * The sweep's test for a pending referral (the same SQL on both backends, the referral aliased
 * `f`): its referee was paid or credited, not a withdrawal, after the link. Only the program's
 * rule (core/referral-decision.ts) says whether that payment qualifies.
 */
export const REFEREE_EARNED = `EXISTS (SELECT 1 FROM rewards r WHERE r.user_id = f.referee_id AND r.state IN ('paid', 'credited') AND r.kind <> 'withdrawal' AND r.created_at >= f.linked_at)`;

/** The sweep's first page: every referral sorts before it (ReferralStore.unfinished's `after`). */
export const FIRST_PAGE = { linkedAt: Number.MAX_SAFE_INTEGER, programId: '', refereeId: '' };

/** A row as the port says it. */
export const referralOf = (r: ReferralRow): Referral => ({
  programId: r.program_id,
  refereeId: r.referee_id,
  ...(r.referrer_id !== null ? { referrerId: r.referrer_id } : {}),
  state: r.state,
  ...(r.reason !== null ? { reason: r.reason as NonNullable<Referral['reason']> } : {}),
  linkedAt: Number(r.linked_at),
  ...(r.qualified_at !== null ? { qualifiedAt: Number(r.qualified_at) } : {}),
  referrerCapped: Boolean(r.referrer_capped),
  rewarded: Boolean(r.rewarded),
});
