import type { ClientBase } from 'pg';
import { balanceMode } from './migrations/balance-mode.js';
import { botDefenses, pruningIndexes } from './migrations/bot-defenses.js';
import { denialsAndDeferrals } from './migrations/denials-and-deferrals.js';
import { dollarBudgets } from './migrations/dollar-budgets.js';
import { groupedWrites, noJit } from './migrations/grouped-writes.js';
import { budgetCounter, ledgerTables, operatorAudit, relaySecrets } from './migrations/ledger.js';
import { oneLifecycle } from './migrations/one-lifecycle.js';
import { forgetPlayerAddresses, referrals } from './migrations/referrals.js';
import { rewardTerms } from './migrations/reward-terms.js';
import { claimRoundTrips, payoutRoundTrips, rewardRecordInPlpgsql } from './migrations/round-trips.js';
import { applyFromTemplate, plannedOncePerSession } from './migrations/template-functions.js';
import { tournaments } from './migrations/tournaments.js';

/**
 * Versioned schema changes, applied in order, each once. Append; never edit one that shipped
 * (migrations.test.ts pins each step's text). Each step lives in migrations/, in the file named
 * after what it changes; the number is its version.
 */
export const MIGRATIONS: readonly string[] = [
  ledgerTables, // 1
  budgetCounter, // 2
  operatorAudit, // 3
  relaySecrets, // 4
  botDefenses, // 5
  payoutRoundTrips, // 6
  claimRoundTrips, // 7
  rewardRecordInPlpgsql, // 8
  pruningIndexes, // 9
  groupedWrites, // 10
  noJit, // 11
  oneLifecycle, // 12
  denialsAndDeferrals, // 13
  balanceMode, // 14
  rewardTerms, // 15
  tournaments, // 16
  dollarBudgets, // 17
  referrals, // 18
  applyFromTemplate, // 19
  plannedOncePerSession, // 20
  forgetPlayerAddresses, // 21
];

/** Any constant: every relay takes this lock to migrate, so two starting at once take turns. */
const MIGRATION_LOCK = 7_424_242_001;

/**
 * Brings the schema up to date, safely when several relays start at once, through a pooler or
 * not. Each step is one transaction on `client` that takes the migration lock first, then reads
 * the version and applies the next step under it: the lock and the steps are on one server
 * session whatever a pooler does, and the lock is a transaction's, so it ends with the step (none
 * is left held on a pooled server connection, as a session's lock taken through a transaction
 * pooler was). `client`: the listen connection (RELAY_DATABASE_LISTEN_URL).
 */
export async function migrate(client: ClientBase): Promise<number> {
  for (;;) {
    try {
      // Another relay may be migrating: wait for it, however long its steps take.
      await client.query(
        `BEGIN; SET LOCAL lock_timeout = 0; SET LOCAL statement_timeout = 0; SELECT pg_advisory_xact_lock(${MIGRATION_LOCK});
         CREATE TABLE IF NOT EXISTS rewardbus_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM rewardbus_migrations');
      const current = rows[0]?.v ?? 0;
      if (current >= MIGRATIONS.length) {
        await client.query('COMMIT');
        return MIGRATIONS.length;
      }
      await client.query(MIGRATIONS[current]!);
      await client.query('INSERT INTO rewardbus_migrations (version) VALUES ($1)', [current + 1]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }
}
