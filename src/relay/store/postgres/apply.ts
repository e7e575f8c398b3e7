import type { RewardTerms } from '../../../wire/relay-api.js';
import { LIFECYCLE, type TransitionName } from '../../core/lifecycle.js';
import type { AuditNote, EntryKind, LedgerState, Settled, Settlement } from '../../core/ports/ledger.js';
import { toLedgerEntry } from '../ledger-row.js';
import { type EventJson, eventOf, RESERVING, type Row, TOLD } from './rows.js';

/**
 * The PostgreSQL ledger's one write primitive (rewardbus_apply, migration 12; its latest text is
 * apply-function.ts's): a batch of
 * changes, each a new entry or a compare-and-set of one from the states its transition leaves,
 * with its reservation, audit row and player event, in one statement. A single change is a batch
 * of one. Claims and settlements both write through it.
 */

/** A new entry, as a claim (or a withdrawal) decided it. */
export interface InsertChange {
  op: 'insert';
  /** A payout, a credit to the player's balance, or a withdrawal from it (never in the budget). */
  kind: EntryKind;
  id: string;
  user: string;
  key: string;
  hash: string;
  achievement: string;
  occurred: string | null;
  state: LedgerState;
  reason: string | null;
  sats: number;
  day: string;
  created: number;
  owner: string | null;
  lease: number | null;
  budgeted: boolean;
  address: string | null;
  /** The gamertag the player's token carried. */
  gamertag: string | null;
  at: number;
  /** What its amount was decided by (the price used, a streak's day, a prize's place); absent: none. */
  terms?: RewardTerms | null;
}

/** A transition of an entry: a compare-and-set on `from` (and on the phase when `unsent`). */
export interface UpdateChange {
  op: 'update';
  id: string;
  /** Moves the entry to this player (a guest's credit merged into the player who linked). */
  user?: string;
  from: readonly LedgerState[];
  unsent: boolean;
  state: LedgerState;
  reason: string | null;
  /** Null: the transaction id and gamertag it had. */
  payment: string | null;
  gamertag: string | null;
  settled: number | null;
  owner: string | null;
  lease: number | null;
  at: number;
  actor: string | null;
  action: string | null;
  /** Decided again (a deferred claim): a credit where it was a payout, or the other way. Null: as it was. */
  kind: EntryKind | null;
  /** Decided again (a deferred claim, an approval on a later day): its new price, day, time, address and budget share. Null: as it was. */
  sats: number | null;
  day: string | null;
  created: number | null;
  setAddress: boolean;
  address: string | null;
  budgeted: boolean | null;
  /** Decided again: the terms it was decided by. Absent or null: as they were. */
  terms?: RewardTerms | null;
}

export type Change = InsertChange | UpdateChange;

/** A change as the primitive answers it: the entry as it is now, the state it left, its event; or busy (its player's event lock held elsewhere). */
export interface AppliedRow {
  i: number;
  busy: boolean;
  entry: Row | null;
  old_state: LedgerState | null;
  event: EventJson | null;
}

/** The primitive's call with its four parameters. */
export const APPLY_SQL = 'SELECT * FROM rewardbus_apply($1, $2, $3, $4)';

/**
 * A batch as the primitive reads it: each change numbered, its null fields left out (the function
 * reads a missing field as null), which halves the JSON a merge or a tournament's batch sends and
 * the server parses.
 */
export function changesJson(changes: readonly Change[]): string {
  return JSON.stringify(
    changes.map((c, i) => {
      const out: Record<string, unknown> = { i };
      for (const [k, v] of Object.entries(c)) if (v !== null) out[k] = v;
      return out;
    }),
  );
}

/** Its parameters: `wait` for the players' event locks (a claim's transaction, holding its players' locks), or answer busy. */
export const applyParams = (changes: readonly Change[], wait: boolean) => [changesJson(changes), RESERVING, TOLD, wait];

/** The change a settlement makes: the transition's states from the lifecycle's table. */
export function settlementChange(
  id: string,
  name: TransitionName,
  to: Settlement,
  now: number,
  lease: { owner: string; leaseMs: number },
  audit?: AuditNote,
  move?: { day: string; budgeted: boolean },
): UpdateChange {
  const t = LIFECYCLE[name];
  const sending = to.state === 'sending';
  return {
    op: 'update',
    id,
    from: t.from,
    unsent: 'unsent' in t,
    state: to.state,
    reason: 'reason' in to ? to.reason : null,
    payment: 'paymentId' in to ? (to.paymentId ?? null) : null,
    gamertag: 'gamertag' in to ? (to.gamertag ?? null) : null,
    settled: to.state === 'paid' || to.state === 'failed' ? now : null,
    // An approved held entry goes on as sending: this relay owns its payment, under a lease.
    owner: sending ? lease.owner : null,
    lease: sending ? now + lease.leaseMs : null,
    at: now,
    actor: audit?.actor ?? null,
    action: audit?.action ?? null,
    kind: null,
    sats: null,
    day: move?.day ?? null,
    created: null,
    setAddress: false,
    address: null,
    budgeted: move ? move.budgeted : null,
  };
}

/** What a decision (a claim's or a withdrawal's) sets on an entry, new or decided again. */
export type Decided = Pick<UpdateChange, 'state' | 'reason' | 'sats' | 'day' | 'created' | 'owner' | 'lease' | 'address' | 'gamertag' | 'at' | 'terms'> & {
  kind: EntryKind;
  budgeted: boolean;
};

/**
 * A deferred key (nothing was paid or reserved) asked again under `transition` (claim, withdraw):
 * decided whole, as new (today's price, day, time and address), a compare-and-set on the states it leaves.
 */
export const redecidedChange = (id: string, transition: 'claim' | 'withdraw', decided: Decided): UpdateChange => ({
  op: 'update',
  id,
  from: LIFECYCLE[transition].from,
  unsent: false,
  payment: null,
  settled: null,
  actor: null,
  action: null,
  setAddress: true,
  ...decided,
});

export const settledOf = (row: AppliedRow | undefined): Settled | undefined =>
  row?.entry ? { entry: toLedgerEntry(row.entry), from: row.old_state!, ...(row.event ? { event: eventOf(row.event) } : {}) } : undefined;
