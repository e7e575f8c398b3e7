import type { RewardTerms } from '../../../wire/relay-api.js';
import type { NewClaim } from '../../core/ports/ledger.js';
import { STREAK_LOOKBACK, type StreakLast, streakLastOf } from '../../core/streak.js';
import { RESERVING_SQL } from '../ledger-row.js';
import type { SqliteDb } from './db.js';

/**
 * A login streak's last day on SQLite, from the player's last reserving rewards of it (their times
 * and terms; core/streak.ts's streakLastOf), read only for a streak's claim, in the claim's own write.
 */
export function sqliteStreaks({ db }: Pick<SqliteDb, 'db'>): (claim: Pick<NewClaim, 'userId' | 'achievementId'>) => StreakLast | undefined {
  const lastStreak = db.prepare<[string, string], { created_at: number; terms: string | null }>(
    `SELECT created_at, terms FROM rewards WHERE user_id = ? AND achievement_id = ? AND ${RESERVING_SQL} ORDER BY created_at DESC LIMIT ${STREAK_LOOKBACK}`,
  );
  return function lastStreakOf(c) {
    return streakLastOf(lastStreak.all(c.userId, c.achievementId).map((e) => ({ at: e.created_at, terms: e.terms === null ? null : (JSON.parse(e.terms) as RewardTerms) })));
  };
}
