import type { LedgerRow } from '../ledger-row.js';

/**
 * The rewards columns a ledger row is read with, in order. Rows are read as arrays (`.raw()`):
 * better-sqlite3 makes an object row by looking up every column's name afresh, which cost twice
 * the rest of reading one.
 */
export const ROW_COLUMNS =
  'id, user_id, idempotency_key, request_hash, achievement_id, sats, state, phase, reason, payment_id, gamertag, occurred_at, address, day, created_at, settled_at, kind, terms';

/** A row as `.raw()` gives it, in ROW_COLUMNS' order. */
export type RawRow = [
  LedgerRow['id'],
  LedgerRow['user_id'],
  LedgerRow['idempotency_key'],
  LedgerRow['request_hash'],
  LedgerRow['achievement_id'],
  LedgerRow['sats'],
  LedgerRow['state'],
  LedgerRow['phase'],
  LedgerRow['reason'],
  LedgerRow['payment_id'],
  LedgerRow['gamertag'],
  LedgerRow['occurred_at'],
  LedgerRow['address'],
  LedgerRow['day'],
  number,
  number | null,
  LedgerRow['kind'],
  string | null,
];

export const rowOf = (r: RawRow): LedgerRow => ({
  id: r[0],
  user_id: r[1],
  idempotency_key: r[2],
  request_hash: r[3],
  achievement_id: r[4],
  sats: r[5],
  state: r[6],
  phase: r[7],
  reason: r[8],
  payment_id: r[9],
  gamertag: r[10],
  occurred_at: r[11],
  address: r[12],
  day: r[13],
  created_at: r[14],
  settled_at: r[15],
  kind: r[16],
  terms: r[17] === null ? null : (JSON.parse(r[17]) as LedgerRow['terms']),
});
