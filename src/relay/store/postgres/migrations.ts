import type { Pool } from 'pg';

/** Versioned schema changes, applied in order, each once. Append; never edit one that shipped. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE rewards (
     seq             bigserial PRIMARY KEY,
     id              text NOT NULL UNIQUE,
     user_id         text NOT NULL,
     idempotency_key text NOT NULL,
     request_hash    text NOT NULL,
     achievement_id  text NOT NULL,
     sats            integer NOT NULL,
     state           text NOT NULL,
     phase           text NOT NULL DEFAULT 'claimed',
     owner           text,
     lease_until     bigint,
     reason          text,
     payment_id      text,
     gamertag        text,
     occurred_at     text,
     day             text NOT NULL,
     created_at      bigint NOT NULL,
     settled_at      bigint,
     UNIQUE (user_id, idempotency_key)
   );
   CREATE INDEX rewards_by_achievement ON rewards (user_id, achievement_id, created_at);
   CREATE INDEX rewards_by_state ON rewards (state) WHERE state IN ('sending', 'needs_review');
   -- Sats reserved per UTC day: scope '*' is the project's budget, 'u:<userId>' a player's cap.
   CREATE TABLE reserved (scope text NOT NULL, day text NOT NULL, sats bigint NOT NULL, PRIMARY KEY (scope, day));
   CREATE TABLE events (id bigserial PRIMARY KEY, user_id text NOT NULL, type text NOT NULL, data jsonb NOT NULL, created_at bigint NOT NULL);
   CREATE INDEX events_by_user ON events (user_id, id);
   CREATE TABLE webhook_events (event_id text PRIMARY KEY, type text NOT NULL, reference_id text, received_at bigint NOT NULL);
   CREATE TABLE ramp_sessions (reference_id text PRIMARY KEY, user_id text NOT NULL, session_id text NOT NULL, expires_at bigint NOT NULL);`,
  // The player's cap is summed from their own rows (their claims take turns anyway); only the
  // project's budget keeps a counter, and only entries counted in it are released from it.
  `ALTER TABLE rewards ADD COLUMN budgeted boolean NOT NULL DEFAULT false;
   CREATE INDEX rewards_by_user_day ON rewards (user_id, day) WHERE state IN ('sending', 'paid', 'needs_review');
   DROP TABLE reserved;
   CREATE TABLE budget (day text PRIMARY KEY, sats bigint NOT NULL);`,
  // Operators' decisions: who settled what by hand, when.
  `CREATE TABLE audit (seq bigserial PRIMARY KEY, reward_id text NOT NULL, actor text NOT NULL, action text NOT NULL, from_state text NOT NULL, to_state text NOT NULL, at bigint NOT NULL);
   CREATE INDEX audit_by_reward ON audit (reward_id);
   CREATE INDEX rewards_by_day ON rewards (day);`,
  // Fingerprints of the secrets the relays sign player tokens with: one that shares none refuses to start.
  `CREATE TABLE relay_secrets (fingerprint text PRIMARY KEY, seen_at bigint NOT NULL);`,
  // Defenses against bots: the client address on each entry (the per-address cap sums its
  // reserving rows), held entries reserve (the partial indexes name the states again), spent
  // proof nonces, and the players each address linked per day.
  `ALTER TABLE rewards ADD COLUMN address text;
   DROP INDEX rewards_by_user_day;
   CREATE INDEX rewards_by_user_day ON rewards (user_id, day) WHERE state IN ('sending', 'paid', 'needs_review', 'held');
   DROP INDEX rewards_by_state;
   CREATE INDEX rewards_by_state ON rewards (state) WHERE state IN ('sending', 'needs_review', 'held');
   CREATE INDEX rewards_by_address_day ON rewards (address, day) WHERE address IS NOT NULL AND state IN ('sending', 'paid', 'needs_review', 'held');
   CREATE TABLE proof_nonces (nonce text PRIMARY KEY, reward_id text NOT NULL, at bigint NOT NULL);
   CREATE TABLE address_links (address text NOT NULL, day text NOT NULL, user_id text NOT NULL, PRIMARY KEY (address, day, user_id));`,
  // A payout's phases each in one round trip: the player's reward event built and appended in
  // the statement that changes the entry. rewardbus_reward_record is toRewardRecord
  // (store/reward-record.ts) in SQL; the ledger contract checks the two agree.
  `CREATE FUNCTION rewardbus_iso(ms bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
     SELECT to_char(to_timestamp(ms / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || '.' || lpad((ms % 1000)::text, 3, '0') || 'Z'
   $$;
   CREATE FUNCTION rewardbus_reward_record(p_id text, p_key text, p_achievement text, p_user text, p_sats integer, p_state text, p_reason text, p_payment text, p_created bigint, p_settled bigint)
   RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
     SELECT jsonb_strip_nulls(jsonb_build_object(
       'id', p_id, 'idempotencyKey', p_key, 'achievementId', p_achievement, 'userId', p_user, 'sats', p_sats,
       'status', CASE WHEN p_state IN ('sending', 'deferred') THEN 'pending' ELSE p_state END,
       'reason', CASE WHEN p_state <> 'sending' AND p_reason <> '' THEN p_reason END,
       'paymentId', NULLIF(p_payment, ''),
       'createdAt', rewardbus_iso(p_created),
       'settledAt', CASE WHEN p_settled <> 0 THEN rewardbus_iso(p_settled) END))
   $$;
   -- A player's appends take turns (the same advisory lock as the event log's own appends), so
   -- their ids commit in order and a stream reading by id misses none.
   CREATE FUNCTION rewardbus_append_event(p_user text, p_type text, p_data jsonb, p_at bigint) RETURNS events LANGUAGE plpgsql AS $$
   DECLARE e events;
   BEGIN
     PERFORM pg_advisory_xact_lock(hashtextextended('e:' || p_user, 1));
     INSERT INTO events (user_id, type, data, created_at) VALUES (p_user, p_type, p_data, p_at) RETURNING * INTO e;
     RETURN e;
   END $$;`,
];

/** Any constant: every relay takes this lock to migrate, so two starting at once take turns. */
const MIGRATION_LOCK = 7_424_242_001;

/** Brings the schema up to date, safely when several relays start at once. */
export async function migrate(pool: Pool): Promise<number> {
  const client = await pool.connect();
  try {
    // Another relay may be migrating: wait for it, however long its steps take.
    await client.query('SET lock_timeout = 0; SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS rewardbus_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM rewardbus_migrations');
    const current = rows[0]?.v ?? 0;
    for (let v = current + 1; v <= MIGRATIONS.length; v++) {
      await client.query('BEGIN');
      try {
        await client.query(MIGRATIONS[v - 1]!);
        await client.query('INSERT INTO rewardbus_migrations (version) VALUES ($1)', [v]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    }
    return MIGRATIONS.length;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await client.query('RESET lock_timeout; RESET statement_timeout').catch(() => undefined);
    client.release();
  }
}
