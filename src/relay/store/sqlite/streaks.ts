import type { RewardTerms } from '../../../wire/relay-api.js';
import type { NewClaim } from '../../core/ports/ledger.js';
import type { StreakLast } from '../../core/streak.js';
import { RESERVING_SQL } from '../ledger-row.js';
import type { SqliteDb } from './db.js';

/**
 * A login streak's last day on SQLite: the player's last reserving reward of it (its time and
 * terms), read only for a streak's claim, in the claim's own write (core/streak.ts decides from it).
 */
export function sqliteStreaks({ db }: Pick<SqliteDb, 'db'>): (claim: Pick<NewClaim, 'userId' | 'achievementId'>) => StreakLast | undefined {
  const lastStreak = db.prepare<[string, string], { created_at: number; terms: string | null }>(
    `SELECT created_at, terms FROM rewards WHERE user_id = ? AND achievement_id = ? AND ${RESERVING_SQL} ORDER BY created_at DESC LIMIT 1`,
  );
  return function lastStreakOf(c) {
    const last = lastStreak.get(c.userId, c.achievementId);
    return last && { at: last.created_at, terms: last.terms === null ? null : (JSON.parse(last.terms) as RewardTerms) };
  };
}
