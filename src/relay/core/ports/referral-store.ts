import type { ReferralAnswer } from '../../../wire/relay-api.js';

/** A referral's state: waiting for the referee's qualifying payment, qualified (both rewards made), or refused at link for good. */
export type ReferralState = 'pending' | 'qualified' | 'refused';

/** One referral of one program: who referred whom, and where it stands. */
export interface Referral {
  programId: string;
  refereeId: string;
  /** Absent for an unknown code (nobody's). */
  referrerId?: string;
  state: ReferralState;
  /** Why it was refused (`unknown_code`, `self_referral`). */
  reason?: Exclude<ReferralAnswer, 'pending'>;
  /** The referee's first link with the relay (ms): play counts from it. */
  linkedAt: number;
  qualifiedAt?: number;
  /** Qualified past the referrer's perReferrerDaily on its UTC day: the referrer's reward is rejected. */
  referrerCapped?: boolean;
  /** Both rewards recorded and decided (none deferred or sending): the sweep is done with it. */
  rewarded?: boolean;
}

/** A referral's qualification as recorded, once: the same answer to every relay and every retry. */
export interface Qualification {
  referrerId: string;
  referrerCapped: boolean;
  /** This call qualified it (false: it was before). */
  fresh: boolean;
}

/**
 * What the referral programs keep (issue 37), beside the ledger on the same backend: each player's
 * code, each userId's first link, the addresses players linked or claimed from, and the referrals.
 */
export interface ReferralStore {
  /** The player's code: `fresh` stored if the player has none yet, else the one stored. */
  code(userId: string, fresh: string): Promise<string>;
  /** Whose code it is. */
  ownerOf(code: string): Promise<string | undefined>;
  /** Records the userId's link: its first link ever (ms), and whether this one is it. */
  firstLink(userId: string, at: number): Promise<{ first: boolean; at: number }>;
  /** Records that the player linked or claimed from `address` (grouped as for caps) at `at`. */
  seen(userId: string, address: string, at: number): Promise<void>;
  /** Whether the player linked or claimed from `address` at or after `since` (ms). */
  seenSince(userId: string, address: string, since: number): Promise<boolean>;
  /**
   * Forgets where players were last seen before `seenBefore` (ms): past the self-referral window
   * it decides nothing. How many went. Optional, as the ledger's prune: a store of one's own may keep them.
   */
  forget?(seenBefore: number): Promise<number>;
  /** Records a referral per program (the first link's only: a referee has one per program). */
  refer(referrals: readonly Referral[]): Promise<void>;
  /** The referee's pending referrals. */
  pending(refereeId: string): Promise<Referral[]>;
  /**
   * Qualifies the referral if it is pending (under the referrer's lock: its count of the UTC day
   * of `at` decides the cap), or answers how it was qualified before; undefined when it is not
   * pending nor qualified.
   */
  qualify(programId: string, refereeId: string, at: number, perReferrerDaily: number | undefined): Promise<Qualification | undefined>;
  /** Both rewards are recorded and decided. */
  rewarded(programId: string, refereeId: string): Promise<void>;
  /**
   * The sweep's work, a page at a time, newest link first: qualified referrals not yet rewarded,
   * and pending ones linked since `since` whose referee has since been paid or credited (a
   * candidate: the program's own rule decides). `after`: the last of the page before. Referees
   * who never earned are not listed, however many there are.
   */
  unfinished(since: number, limit: number, after?: Pick<Referral, 'linkedAt' | 'programId' | 'refereeId'>): Promise<Referral[]>;
  /** The newest referrals, for the operator. */
  recent(limit: number): Promise<Referral[]>;
}
