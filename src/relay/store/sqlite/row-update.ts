import type Database from 'better-sqlite3';
import type { LedgerRow as Row } from '../ledger-row.js';

/** Every column a transition may change (a deferred claim decided again, a guest's credit merged: nearly all). */
const COLUMNS = ['state', 'phase', 'reason', 'payment_id', 'gamertag', 'sats', 'address', 'day', 'created_at', 'settled_at', 'kind', 'user_id', 'terms'] as const;
type Column = (typeof COLUMNS)[number];
export type Value = string | number | null;

/** A column's value as stored: times as numbers (a row may carry them as strings), terms as JSON text. */
function stored(r: Row, c: Column): Value {
  const v = r[c];
  if (c === 'terms') return v === null ? null : JSON.stringify(v);
  if (c === 'created_at' || c === 'settled_at') return v === null ? null : Number(v);
  return v as Value;
}

/**
 * Writes an entry's transition as one UPDATE that sets only the columns it changed. SQLite
 * rewrites every index over a column an UPDATE names, changed or not: naming all of them made a
 * payment's settlement rewrite the entry's key, achievement and balance indexes for a new state
 * and payment id (a third of the statements' time in a payout). One statement per set of
 * columns, prepared when first met (a handful in practice) by `prepare`, the ledger's: the one
 * write primitive's file keeps every statement that writes a reward.
 */
export function rowUpdater(prepare: (set: string) => Database.Statement<Value[]>) {
  const statements = new Map<number, Database.Statement<Value[]>>();
  return function update(before: Row, after: Row): void {
    let changed = 0;
    const values: Value[] = [];
    for (let i = 0; i < COLUMNS.length; i++) {
      const v = stored(after, COLUMNS[i]!);
      if (v === stored(before, COLUMNS[i]!)) continue;
      changed |= 1 << i;
      values.push(v);
    }
    if (changed === 0) return;
    let statement = statements.get(changed);
    if (!statement) {
      statement = prepare(
        COLUMNS.filter((_, i) => changed & (1 << i))
          .map((c) => `${c} = ?`)
          .join(', '),
      );
      statements.set(changed, statement);
    }
    values.push(after.id);
    statement.run(...values);
  };
}
