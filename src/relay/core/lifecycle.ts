import type { RewardStatus } from '../../wire/relay-api.js';

/**
 * A reward's lifecycle, as one table: every state, and every named transition with the states it
 * leaves and the states it may reach. Nothing else in the relay says which change is allowed:
 * the settlement core (core/settlements.ts) checks each change against this table, and each
 * store's one write primitive applies it (row, reservation, audit row, player event) in one
 * transaction. A new kind of reward is a row here, and tests.
 */

/**
 * - `sending`: decided, its sats reserved; committed before the service is called.
 * - `paid` / `failed` / `rejected`: final. failed and rejected hold no reservation.
 * - `needs_review`: the service may have paid; never sent again without an operator.
 * - `deferred`: nothing was paid and nothing is reserved (the service could not be reached, or
 *   the claim came before the player's play time, `too_early`); the same key claims it again,
 *   decided whole by the rules in force then.
 * - `held`: decided and reserved, waiting for an operator: approved, it goes on as `sending`;
 *   denied, it is `rejected` (`denied_by_operator`).
 * - `credited`: final; a claim in balance mode, its sats on the player's balance (and reserved
 *   against the day's caps and budget as a payment would be). Nothing is sent to the service.
 *
 * A withdrawal from a balance goes through the same states as a payment (sending, held, paid,
 * failed, needs_review, deferred): its reserving states are the ones that debit the balance, and
 * its entry counts on the player's withdrawals of the day, not on the caps and budget claims read.
 */
export type RewardState = 'sending' | 'paid' | 'failed' | 'rejected' | 'needs_review' | 'deferred' | 'held' | 'credited';

/** What an entry is: a reward paid at once, a reward credited to a balance, or a withdrawal from one. */
export type EntryKind = 'payout' | 'credit' | 'withdrawal';

export interface StateRow {
  /** Holds sats against the caps and the budget, and counts for repeat policies. */
  reserves: boolean;
  /** The player hears of an entry reaching it (a `reward` event). */
  told: boolean;
  /** What the player's record says. */
  status: RewardStatus;
}

export const STATES: Readonly<Record<RewardState, StateRow>> = {
  sending: { reserves: true, told: false, status: 'pending' },
  deferred: { reserves: false, told: false, status: 'pending' },
  held: { reserves: true, told: true, status: 'held' },
  paid: { reserves: true, told: true, status: 'paid' },
  needs_review: { reserves: true, told: true, status: 'needs_review' },
  failed: { reserves: false, told: true, status: 'failed' },
  rejected: { reserves: false, told: true, status: 'rejected' },
  credited: { reserves: true, told: true, status: 'credited' },
};

export const ALL_STATES = Object.keys(STATES) as readonly RewardState[];
/** States that hold a reservation against caps and count for repeat policies. */
export const RESERVING_STATES: readonly RewardState[] = ALL_STATES.filter((s) => STATES[s].reserves);
/** States the player hears of; sending and deferred are the relay's own business. */
export const TOLD_STATES: readonly RewardState[] = ALL_STATES.filter((s) => STATES[s].told);

export interface Transition {
  /** The states it leaves; empty: a new entry only. */
  from: readonly RewardState[];
  /** The states it may reach. */
  to: readonly RewardState[];
  /** Also from no entry at all (a new idempotency key). */
  creates?: true;
  /** A decision by hand: it carries an audit note (who, how), written in its transaction. `optional`: when an operator asked. */
  audit: 'required' | 'optional' | 'none';
  /** Only while the payment has not left (the `claimed` phase of `sending`). */
  unsent?: true;
  /**
   * Decided again against the day it happens on: a held claim approved on a later UTC day is
   * checked against that day's budget and caps and counts there.
   */
  redecides?: true;
}

/**
 * Every change a reward can go through. What each does to the reservation follows from its
 * states (leaving a reserving state frees exactly what was reserved; entering one reserves the
 * entry's sats); whether the player is told follows from the state reached.
 */
export const LIFECYCLE = {
  /** A claim decided under its key: new, or a deferred one claimed again (decided whole, as new). */
  claim: { from: ['deferred'], to: ['sending', 'held', 'rejected', 'deferred', 'credited'], creates: true, audit: 'none' },
  /** A withdrawal from the player's balance, debited under its key (new, or a deferred one asked again): paid next, or held for an operator. */
  withdraw: { from: ['deferred'], to: ['sending', 'held'], creates: true, audit: 'none' },
  /** The recovery point: the payment request is about to leave (a phase, not a state). */
  send: { from: ['sending'], to: ['sending'], audit: 'none', unsent: true },
  /** The service's answer to the payment. */
  settle: { from: ['sending'], to: ['paid', 'failed', 'needs_review', 'deferred'], audit: 'none' },
  /** An answer recorded late (the store was down when it came): recovery may have put it in review meanwhile. */
  record: { from: ['sending', 'needs_review'], to: ['paid', 'failed', 'needs_review', 'deferred'], audit: 'none' },
  /** After a crash, a payment that never left: back to the client's retry. */
  release: { from: ['sending'], to: ['deferred'], audit: 'none', unsent: true },
  /** After a crash, a payment that may have left: to review, never sent again. */
  interrupt: { from: ['sending'], to: ['needs_review'], audit: 'none' },
  /** The service's answer after the timeout, settling the review it went to. */
  late_answer: { from: ['needs_review'], to: ['paid', 'failed'], audit: 'none' },
  /** The payment-status endpoint says how it ended (asked by the relay, or by an operator). */
  reconcile: { from: ['needs_review'], to: ['paid', 'failed'], audit: 'optional' },
  /** The service's answer disagrees with a final decision: back to review, marked and audited. */
  contradict: { from: ['paid', 'failed', 'rejected'], to: ['needs_review'], audit: 'required' },
  /** An operator approved a held entry: paid next, or (a credit) credited. */
  approve: { from: ['held'], to: ['sending', 'credited'], audit: 'required', redecides: true },
  deny: { from: ['held'], to: ['rejected'], audit: 'required' },
  mark_paid: { from: ['needs_review'], to: ['paid'], audit: 'required' },
  mark_failed: { from: ['needs_review'], to: ['failed'], audit: 'required' },
  /**
   * A guest linked a gamertag: each of the guest's credits moves to the player (credited, or still
   * held for an operator), or is dropped (rejected) when the player's own repeat rules or cap
   * already hold it. Audited (the link).
   */
  merge: { from: ['credited', 'held'], to: ['credited', 'held', 'rejected'], audit: 'required' },
} as const satisfies Record<string, Transition>;

export type TransitionName = keyof typeof LIFECYCLE;

/** A change the table does not allow: a defect in the caller, refused before anything is written. */
export class LifecycleError extends Error {
  override name = 'LifecycleError';
}

/** The transition, checked: `to` must be one it may reach, and a decision by hand must say who. */
export function transition(name: TransitionName, to: RewardState, audited: boolean): Transition {
  const t: Transition = LIFECYCLE[name];
  if (!t) throw new LifecycleError(`no such transition: ${name}`);
  if (!t.to.includes(to)) throw new LifecycleError(`${name} cannot reach ${to} (it reaches ${t.to.join(', ')})`);
  if (t.audit === 'required' && !audited) throw new LifecycleError(`${name} is a decision by hand: it needs an audit note`);
  if (t.audit === 'none' && audited) throw new LifecycleError(`${name} is not a decision by hand: it takes no audit note`);
  return t;
}

/** Whether `name` may move an entry in `state` (a new key: `undefined`). */
export const allows = (name: TransitionName, state: RewardState | undefined): boolean => {
  const t: Transition = LIFECYCLE[name];
  return state === undefined ? t.creates === true : t.from.includes(state);
};

/** Leaving a reserving state frees the entry's sats; entering one reserves them. */
export const reserves = (state: RewardState): boolean => STATES[state].reserves;
export const told = (state: RewardState): boolean => STATES[state].told;
