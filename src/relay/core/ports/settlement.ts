// A change of an entry's state, as asked of the ledger and as committed, and its audit.
import type { ClaimLimits } from './claim.js';
import type { PlayerEvent } from './event-log.js';
import type { LedgerEntry, LedgerState } from './ledger-entry.js';

/** A state change as committed: the entry after it, the state it left, and the player's event. */
export interface Settled {
  entry: LedgerEntry;
  from: LedgerState;
  /** The player's `reward` event, appended in the same transaction (for states the player sees). */
  event?: PlayerEvent;
}

export interface SettleOptions {
  /** The settlement's time. Default: now. */
  now?: number;
  /** An operator's decision: recorded with who and when in the same transaction. */
  audit?: AuditNote;
  /**
   * For a transition that decides again (approve): the limits of the day it happens on. An entry
   * reserved on an earlier UTC day is checked against this day's caps and budget, and moves there.
   */
  limits?: ClaimLimits;
}

/** What a settlement did: the change committed, or undefined when the entry was not in a state the transition leaves. */
export type SettleResult = Settled | undefined;

export type Settlement =
  /** An operator approved a held entry: it is paid through the service next. */
  | { state: 'sending' }
  /** An operator approved a held credit: on the player's balance now. */
  | { state: 'credited' }
  /** An operator denied a held entry. */
  | { state: 'rejected'; reason: string }
  | { state: 'paid'; paymentId: string; gamertag?: string }
  | { state: 'failed'; reason: string; gamertag?: string }
  | { state: 'needs_review'; reason: string; paymentId?: string; gamertag?: string }
  | { state: 'deferred'; reason: string };

/** Who decided a settlement by hand, and how. */
export interface AuditNote {
  actor: string;
  action: string;
}

export interface AuditRecord extends AuditNote {
  rewardId: string;
  at: number;
  fromState: LedgerState;
  toState: LedgerState;
}
