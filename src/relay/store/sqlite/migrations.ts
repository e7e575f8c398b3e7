import type Database from 'better-sqlite3';
import { STATE_LIST } from '../state-lists.js';

/**
 * The SQLite file's schema, versioned like PostgreSQL's (postgres/migrations.ts): each step runs
 * once, in order, in one transaction with the new `user_version`. Append; never edit one that
 * shipped. The first step is written to adopt a file made before versions existed (its tables
 * exist, with or without the send phase column).
 */
const MIGRATIONS: ReadonlyArray<(db: Database.Database) => void> = [
  (db) => {
    db.exec(`
      -- Rows, ids (UUIDv7) and the state index grow at their ends; only the two per-player indexes
      -- take a write in the middle: few pages per commit, which is what a synchronous=FULL commit costs.
      CREATE TABLE IF NOT EXISTS rewards (
        seq             INTEGER PRIMARY KEY,
        id              TEXT NOT NULL UNIQUE,
        user_id         TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        request_hash    TEXT NOT NULL,
        achievement_id  TEXT NOT NULL,
        sats            INTEGER NOT NULL,
        state           TEXT NOT NULL,
        -- While sending: 'claimed' until the payment is about to leave, then 'sent' (a recovery point).
        phase           TEXT NOT NULL DEFAULT 'sent',
        reason          TEXT,
        payment_id      TEXT,
        gamertag        TEXT,
        occurred_at     TEXT,
        day             TEXT NOT NULL,
        created_at      INTEGER NOT NULL,
        settled_at      INTEGER,
        UNIQUE (user_id, idempotency_key)
      );
      CREATE INDEX IF NOT EXISTS rewards_by_achievement ON rewards (user_id, achievement_id, created_at);
      CREATE INDEX IF NOT EXISTS rewards_by_state ON rewards (state) WHERE state IN ('sending', 'needs_review');
      -- Operators' decisions: who settled what by hand, when.
      CREATE TABLE IF NOT EXISTS audit (
        seq        INTEGER PRIMARY KEY,
        reward_id  TEXT NOT NULL,
        actor      TEXT NOT NULL,
        action     TEXT NOT NULL,
        from_state TEXT NOT NULL,
        to_state   TEXT NOT NULL,
        at         INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS audit_by_reward ON audit (reward_id);
      -- Sats reserved per UTC day: scope '*' is the project's budget, 'u:<userId>' a player's cap.
      CREATE TABLE IF NOT EXISTS reserved (
        scope TEXT NOT NULL,
        day   TEXT NOT NULL,
        sats  INTEGER NOT NULL,
        PRIMARY KEY (scope, day)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS events (
        id         INTEGER PRIMARY KEY,
        user_id    TEXT NOT NULL,
        type       TEXT NOT NULL,
        data       TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE TABLE IF NOT EXISTS webhook_events (
        event_id     TEXT PRIMARY KEY,
        type         TEXT NOT NULL,
        reference_id TEXT,
        received_at  INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS ramp_sessions (
        reference_id TEXT PRIMARY KEY,
        user_id      TEXT NOT NULL,
        session_id   TEXT NOT NULL,
        expires_at   INTEGER NOT NULL
      ) WITHOUT ROWID;
    `);
    // Ledgers from before send phases: what was sending then may have been sent.
    if (!(db.pragma('table_info(rewards)') as Array<{ name: string }>).some((c) => c.name === 'phase'))
      db.exec(`ALTER TABLE rewards ADD COLUMN phase TEXT NOT NULL DEFAULT 'sent'`);
  },
  // A resuming stream reads only its player's events: without this, a reconnect with
  // Last-Event-ID: 0 scanned the whole table.
  (db) => db.exec('CREATE INDEX IF NOT EXISTS events_by_user ON events (user_id, id)'),
  // Defenses against bots: the client address on each entry (its sats are reserved under scope
  // 'a:<address>'), spent proof nonces, the players each address linked per day, held entries.
  (db) =>
    db.exec(`
      ALTER TABLE rewards ADD COLUMN address TEXT;
      CREATE TABLE proof_nonces (nonce TEXT PRIMARY KEY, reward_id TEXT NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE address_links (address TEXT NOT NULL, day TEXT NOT NULL, user_id TEXT NOT NULL, PRIMARY KEY (address, day, user_id)) WITHOUT ROWID;
      DROP INDEX IF EXISTS rewards_by_state;
      CREATE INDEX rewards_by_state ON rewards (state) WHERE state IN ('sending', 'needs_review', 'held');
    `),
  // Pruning reads past days and old nonces by these: without them each chunk scanned the table
  // on the writer's thread.
  (db) =>
    db.exec(`
      CREATE INDEX reserved_by_day ON reserved (day);
      CREATE INDEX address_links_by_day ON address_links (day);
      CREATE INDEX proof_nonces_by_at ON proof_nonces (at);
    `),
  // `state` holds only the lifecycle's states (core/lifecycle.ts). SQLite adds no CHECK to a table
  // that exists without rewriting it: triggers refuse any other value, on insert and on update.
  (db) =>
    db.exec(`
      CREATE TRIGGER rewards_state_insert BEFORE INSERT ON rewards WHEN NEW.state NOT IN (${STATE_LIST})
        BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: rewards.state is not a lifecycle state'); END;
      CREATE TRIGGER rewards_state_update BEFORE UPDATE OF state ON rewards WHEN NEW.state NOT IN (${STATE_LIST})
        BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: rewards.state is not a lifecycle state'); END;
    `),
  // A claim reads when its player was last denied its achievement (few rows: denials are by hand),
  // and pruning reads deferred entries by age: neither scans the player's history or the table.
  (db) =>
    db.exec(`
      CREATE INDEX rewards_denied ON rewards (user_id, achievement_id) WHERE state = 'rejected' AND reason = 'denied_by_operator';
      CREATE INDEX rewards_deferred ON rewards (created_at) WHERE state = 'deferred';
    `),
  // Balance mode: what each entry is (a payout, a credit to the player's balance, a withdrawal from
  // it), read by the player's balance through its own index; the state triggers again, with the
  // lifecycle's states as they are now (`credited`); witnessed play, the game server's raises
  // of the withdrawal allowance, and the guests merged into players.
  (db) =>
    db.exec(`
      ALTER TABLE rewards ADD COLUMN kind TEXT NOT NULL DEFAULT 'payout';
      CREATE INDEX rewards_balance ON rewards (user_id, kind, day) WHERE kind <> 'payout';
      DROP TRIGGER rewards_state_insert;
      DROP TRIGGER rewards_state_update;
      CREATE TRIGGER rewards_state_insert BEFORE INSERT ON rewards WHEN NEW.state NOT IN (${STATE_LIST})
        BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: rewards.state is not a lifecycle state'); END;
      CREATE TRIGGER rewards_state_update BEFORE UPDATE OF state ON rewards WHEN NEW.state NOT IN (${STATE_LIST})
        BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: rewards.state is not a lifecycle state'); END;
      CREATE TABLE play_time (user_id TEXT PRIMARY KEY, play_ms INTEGER NOT NULL, last_beat_at INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE allowance_raises (
        user_id TEXT NOT NULL, idempotency_key TEXT NOT NULL, sats INTEGER NOT NULL, reason TEXT NOT NULL, at INTEGER NOT NULL,
        PRIMARY KEY (user_id, idempotency_key)
      ) WITHOUT ROWID;
      CREATE TABLE merged_guests (guest_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
    `),
  // What a reward's amount was decided by (issues 37 and 38): the price used, a streak's day, a
  // prize's period and place, a referral's side, as JSON; one column every program shares.
  (db) => db.exec('ALTER TABLE rewards ADD COLUMN terms TEXT'),
  // Tournaments (issue 37, its own step): each period's results posted once (their ranking's hash,
  // when, by whom), and the players who linked with this relay, whom a ranking may name (by
  // userId, or by the gamertag they last linked with).
  (db) =>
    db.exec(`
      CREATE TABLE tournament_results (
        tournament_id TEXT NOT NULL, period TEXT NOT NULL, ranking_hash TEXT NOT NULL, places INTEGER NOT NULL, at INTEGER NOT NULL, by TEXT NOT NULL,
        PRIMARY KEY (tournament_id, period)
      ) WITHOUT ROWID;
      CREATE TABLE linked_players (user_id TEXT PRIMARY KEY, gamertag TEXT NOT NULL, linked_at INTEGER NOT NULL) WITHOUT ROWID;
      CREATE INDEX linked_players_by_gamertag ON linked_players (gamertag, linked_at);
    `),
  // Referrals (issue 37): each player's code; each userId's first link with the relay (only a
  // first link may be referred: filled from the players the ledger knows already, so enabling a
  // program later makes no old player "new"); the addresses (IPv6 by /64) players linked or claimed
  // from, for self-referrals; and each referral per program, pending, qualified or refused.
  (db) =>
    db.exec(`
      CREATE TABLE referral_codes (user_id TEXT PRIMARY KEY, code TEXT NOT NULL UNIQUE) WITHOUT ROWID;
      CREATE TABLE first_links (user_id TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO first_links (user_id, at)
        SELECT user_id, min(at) FROM (
          SELECT user_id, created_at AS at FROM rewards
          UNION ALL SELECT user_id, CAST(strftime('%s', day) AS INTEGER) * 1000 FROM address_links) GROUP BY user_id;
      CREATE TABLE player_addresses (user_id TEXT NOT NULL, address TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (user_id, address)) WITHOUT ROWID;
      CREATE TABLE referrals (
        program_id TEXT NOT NULL, referee_id TEXT NOT NULL, referrer_id TEXT,
        state TEXT NOT NULL CHECK (state IN ('pending', 'qualified', 'refused')), reason TEXT,
        linked_at INTEGER NOT NULL, qualified_at INTEGER, qualified_day TEXT,
        referrer_capped INTEGER NOT NULL DEFAULT 0, rewarded INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (program_id, referee_id)
      ) WITHOUT ROWID;
      CREATE INDEX referrals_pending ON referrals (referee_id) WHERE state = 'pending';
      CREATE INDEX referrals_qualified ON referrals (referrer_id, qualified_day) WHERE state = 'qualified';
      CREATE INDEX referrals_by_link ON referrals (linked_at);
    `),
  // Where players were seen is forgotten past the self-referral window (ReferralStore.forget).
  (db) => db.exec('CREATE INDEX player_addresses_by_at ON player_addresses (at)'),
];

/**
 * Brings the file's schema up to date; returns its version. Other processes may open the file at
 * the same moment (the relay, `review`, `tournament`): each step holds the write lock from its
 * start (BEGIN IMMEDIATE, waiting its turn) and reads the version under it, so a step another
 * process took meanwhile is not run again (it failed that open: "duplicate column name: address").
 */
export function migrate(db: Database.Database): number {
  const version = () => db.pragma('user_version', { simple: true }) as number;
  const step = db.transaction((): boolean => {
    const v = version();
    if (v >= MIGRATIONS.length) return false;
    MIGRATIONS[v]!(db);
    db.pragma(`user_version = ${v + 1}`);
    return true;
  });
  // Up to date, as nearly every open finds it: no write lock taken.
  if (version() < MIGRATIONS.length) while (step.immediate()) {}
  return MIGRATIONS.length;
}
