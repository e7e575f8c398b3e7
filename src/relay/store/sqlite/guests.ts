import type { RewardTerms } from '../../../wire/relay-api.js';
import { mergeDecider } from '../../core/claim-decision.js';
import type { PlayerEvent } from '../../core/ports/event-log.js';
import type { AuditNote, GuestMerge, Ledger, MergeRules, Settled } from '../../core/ports/ledger.js';
import { entryUsdMicros } from '../../core/price.js';
import { MERGED_SQL, RESERVING_SQL, type LedgerRow as Row, toLedgerEntry } from '../ledger-row.js';
import type { SqliteDb } from './db.js';
import { type RawRow, ROW_COLUMNS, rowOf } from './reward-rows.js';

/** What the ledger lends a guest's merge: its one write primitive (a merge is audited). */
export interface SqliteGuestParts {
  commit(before: Row | undefined, after: Row, at: number, audit?: AuditNote): PlayerEvent | undefined;
}

/**
 * Guests on SQLite: a guest's credits merged into the player who linked, in one write of the
 * store's thread, through the ledger's one write primitive: each credit moved (to the player,
 * credited or still held) or dropped (rejected) by the player's repeat rules and cap (core/claim-decision.ts), audited and told.
 */
export function sqliteGuests({ db, write }: SqliteDb, { commit }: SqliteGuestParts): Required<Pick<Ledger, 'mergeGuest' | 'mergedInto'>> {
  const q = {
    byKey: db.prepare<[string, string], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE user_id = ? AND idempotency_key = ?`).raw(),
    guestCredits: db.prepare<[string], RawRow>(`SELECT ${ROW_COLUMNS} FROM rewards WHERE user_id = ? AND kind = 'credit' AND ${MERGED_SQL} ORDER BY created_at, seq`).raw(),
    reservingTimes: db
      .prepare<[string, string], number>(`SELECT created_at FROM rewards WHERE user_id = ? AND achievement_id = ? AND kind <> 'withdrawal' AND ${RESERVING_SQL}`)
      .pluck(),
    // A day's reserving entries of the player, from the rows (as PostgreSQL sums them): a guest's
    // credit may be days old, and the `reserved` rows of past days are pruned after a day.
    dayEntries: db
      .prepare<[string, string], [number, string | null]>(`SELECT sats, terms FROM rewards WHERE user_id = ? AND day = ? AND kind <> 'withdrawal' AND ${RESERVING_SQL}`)
      .raw(),
    mergedInto: db.prepare<[string], string>('SELECT user_id FROM merged_guests WHERE guest_id = ?').pluck(),
    merged: db.prepare<[string, string, number]>('INSERT INTO merged_guests (guest_id, user_id, at) VALUES (?, ?, ?)'),
  };

  function mergeNow(guestId: string, userId: string, { repeats, limits, prizes }: MergeRules, audit: AuditNote, now: number): GuestMerge {
    // Merged before: into this player, what the guest still holds moves (a claim committed after
    // the link); into another, nothing.
    const into = q.mergedInto.get(guestId);
    if (into !== undefined && into !== userId) return { merged: false, moved: [], dropped: [] };
    if (into === undefined) q.merged.run(guestId, userId, now);
    const moved: Settled[] = [];
    const dropped: Settled[] = [];
    const decide = mergeDecider(
      repeats,
      limits,
      {
        times: (achievementId) => q.reservingTimes.all(userId, achievementId),
        day: (day) => {
          const held = { userSats: 0, userUsdMicros: 0 };
          for (const [sats, terms] of q.dayEntries.all(userId, day)) {
            held.userSats += sats;
            held.userUsdMicros += entryUsdMicros(terms === null ? null : (JSON.parse(terms) as RewardTerms));
          }
          return held;
        },
      },
      prizes,
    );
    for (const raw of q.guestCredits.all(guestId)) {
      const row = rowOf(raw);
      const reason = decide({
        achievementId: row.achievement_id,
        at: Number(row.created_at),
        day: row.day,
        sats: row.sats,
        usdMicros: entryUsdMicros(row.terms),
        used: q.byKey.get(userId, row.idempotency_key) !== undefined,
      });
      // A dropped credit stays the guest's, rejected: the player's own record is untouched. A moved
      // one keeps its state: a held credit waits for the operator as the player's.
      const after: Row = reason ? { ...row, state: 'rejected', reason } : { ...row, user_id: userId };
      const event = commit(row, after, now, audit);
      (reason ? dropped : moved).push({ entry: toLedgerEntry(after), from: row.state, ...(event ? { event } : {}) });
    }
    return { merged: into === undefined, moved, dropped };
  }

  return {
    mergeGuest: (guestId, userId, rules, audit, now) => write(() => mergeNow(guestId, userId, rules, audit, now)),
    mergedInto: async (guestId) => q.mergedInto.get(guestId),
  };
}
