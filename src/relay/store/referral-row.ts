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
