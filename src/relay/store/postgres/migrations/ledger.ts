// Steps of MIGRATIONS (../migrations.ts), shipped, so their text never changes: the ledger's
// first tables, its budget counter, the operators' audit and the relays' secrets.

export const ledgerTables = `CREATE TABLE rewards (
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
   CREATE TABLE ramp_sessions (reference_id text PRIMARY KEY, user_id text NOT NULL, session_id text NOT NULL, expires_at bigint NOT NULL);`;

// The player's cap is summed from their own rows (their claims take turns anyway); only the
// project's budget keeps a counter, and only entries counted in it are released from it.
export const budgetCounter = `ALTER TABLE rewards ADD COLUMN budgeted boolean NOT NULL DEFAULT false;
   CREATE INDEX rewards_by_user_day ON rewards (user_id, day) WHERE state IN ('sending', 'paid', 'needs_review');
   DROP TABLE reserved;
   CREATE TABLE budget (day text PRIMARY KEY, sats bigint NOT NULL);`;

// Operators' decisions: who settled what by hand, when.
export const operatorAudit = `CREATE TABLE audit (seq bigserial PRIMARY KEY, reward_id text NOT NULL, actor text NOT NULL, action text NOT NULL, from_state text NOT NULL, to_state text NOT NULL, at bigint NOT NULL);
   CREATE INDEX audit_by_reward ON audit (reward_id);
   CREATE INDEX rewards_by_day ON rewards (day);`;

// Fingerprints of the secrets the relays sign player tokens with: one that shares none refuses to start.
export const relaySecrets = `CREATE TABLE relay_secrets (fingerprint text PRIMARY KEY, seen_at bigint NOT NULL);`;
