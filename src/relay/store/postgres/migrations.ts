import type { ClientBase } from 'pg';
import { ALL_STATES, RESERVING_STATES } from '../../core/lifecycle.js';
import { applyFunction, CHANGE_COLUMNS } from './apply-function.js';
import { CLAIM_GROUP_LOCKS, claimFactsFunction } from './claim-facts-function.js';

/** The lifecycle's states, and those that reserve sats, as SQL lists (written into the migrations from 12 on). */
const STATE_LIST = ALL_STATES.map((s) => `'${s}'`).join(', ');
const RESERVING_LIST = RESERVING_STATES.map((s) => `'${s}'`).join(', ');
/** The same, inside a string literal (an EXECUTE's text). */
const RESERVING_QUOTED = RESERVING_STATES.map((s) => `''${s}''`).join(', ');

/** Versioned schema changes, applied in order, each once. Append; never edit one that shipped. */
export const MIGRATIONS: readonly string[] = [
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
  // (core/reward-record.ts) in SQL; the ledger contract checks the two agree.
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
  // A claim's two round trips as two calls: PL/pgSQL keeps each statement's plan for the session,
  // where the same statements sent as text were parsed and planned on every claim (half the
  // server's CPU per payout). The first takes the locks and reads the facts, each statement under
  // the locks taken before it; the second writes a new entry, its budget share and its event.
  `CREATE FUNCTION rewardbus_claim_facts(p_user text, p_key text, p_day text, p_achievement text, p_nonce text, p_id text, p_at bigint,
       p_budgeted boolean, p_user_cap boolean, p_address text, p_lock_address text)
   RETURNS TABLE (existing json, user_sats bigint, address_sats bigint, project_sats bigint, last_at bigint, nonce_fresh boolean)
   LANGUAGE plpgsql AS $$
   BEGIN
     PERFORM pg_advisory_xact_lock(hashtextextended('u:' || p_user, 0));
     IF p_lock_address IS NOT NULL THEN PERFORM pg_advisory_xact_lock(hashtextextended('a:' || p_lock_address, 0)); END IF;
     RETURN QUERY
       WITH n AS (
         INSERT INTO proof_nonces (nonce, reward_id, at)
         SELECT p_nonce, coalesce((SELECT r.id FROM rewards r WHERE r.user_id = p_user AND r.idempotency_key = p_key), p_id), p_at WHERE p_nonce IS NOT NULL
         ON CONFLICT DO NOTHING RETURNING 1),
       b AS (INSERT INTO budget AS bu (day, sats) SELECT p_day, 0 WHERE p_budgeted ON CONFLICT (day) DO UPDATE SET sats = bu.sats RETURNING bu.sats)
       SELECT
         (SELECT row_to_json(r) FROM rewards r WHERE r.user_id = p_user AND r.idempotency_key = p_key),
         CASE WHEN p_user_cap THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.user_id = p_user AND r.day = p_day AND r.state IN ('sending', 'paid', 'needs_review', 'held')) ELSE 0 END::bigint,
         CASE WHEN p_address IS NOT NULL THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.address = p_address AND r.day = p_day AND r.state IN ('sending', 'paid', 'needs_review', 'held')) ELSE 0 END::bigint,
         (SELECT b.sats FROM b),
         (SELECT r.created_at FROM rewards r WHERE r.user_id = p_user AND r.achievement_id = p_achievement AND r.state IN ('sending', 'paid', 'needs_review', 'held') ORDER BY r.created_at DESC LIMIT 1),
         EXISTS (SELECT 1 FROM n);
   END $$;
   CREATE FUNCTION rewardbus_claim_insert(p_id text, p_user text, p_key text, p_hash text, p_achievement text, p_sats integer, p_state text, p_reason text,
       p_occurred text, p_day text, p_at bigint, p_owner text, p_lease bigint, p_budgeted boolean, p_address text, p_told boolean)
   RETURNS TABLE (entry json, event json)
   LANGUAGE plpgsql AS $$
   BEGIN
     RETURN QUERY
       WITH r AS (
         INSERT INTO rewards (id, user_id, idempotency_key, request_hash, achievement_id, sats, state, phase, reason, occurred_at, day, created_at, owner, lease_until, budgeted, address)
         VALUES (p_id, p_user, p_key, p_hash, p_achievement, p_sats, p_state, 'claimed', p_reason, p_occurred, p_day, p_at, p_owner, p_lease, p_budgeted, p_address) RETURNING *),
       b AS (UPDATE budget bu SET sats = bu.sats + (SELECT r.sats FROM r) WHERE bu.day = p_day AND p_budgeted),
       ev AS (
         SELECT e.* FROM r, LATERAL rewardbus_append_event(r.user_id, 'reward',
           rewardbus_reward_record(r.id, r.idempotency_key, r.achievement_id, r.user_id, r.sats, r.state, r.reason, r.payment_id, r.created_at, r.settled_at), p_at) e
         WHERE p_told)
       SELECT row_to_json(r), (SELECT row_to_json(ev) FROM ev) FROM r;
   END $$;`,
  // The reward record in PL/pgSQL: as SQL functions they could not be inlined (to_char is only
  // stable), so each call set up an executor of its own, twice per event. Same bodies.
  `CREATE OR REPLACE FUNCTION rewardbus_iso(ms bigint) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
   BEGIN
     RETURN to_char(to_timestamp(ms / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || '.' || lpad((ms % 1000)::text, 3, '0') || 'Z';
   END $$;
   CREATE OR REPLACE FUNCTION rewardbus_reward_record(p_id text, p_key text, p_achievement text, p_user text, p_sats integer, p_state text, p_reason text, p_payment text, p_created bigint, p_settled bigint)
   RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
   BEGIN
     RETURN jsonb_strip_nulls(jsonb_build_object(
       'id', p_id, 'idempotencyKey', p_key, 'achievementId', p_achievement, 'userId', p_user, 'sats', p_sats,
       'status', CASE WHEN p_state IN ('sending', 'deferred') THEN 'pending' ELSE p_state END,
       'reason', CASE WHEN p_state <> 'sending' AND p_reason <> '' THEN p_reason END,
       'paymentId', NULLIF(p_payment, ''),
       'createdAt', rewardbus_iso(p_created),
       'settledAt', CASE WHEN p_settled <> 0 THEN rewardbus_iso(p_settled) END));
   END $$;`,
  // Pruning reads old links and nonces by these (several relays prune, one at a time).
  `CREATE INDEX address_links_by_day ON address_links (day);
   CREATE INDEX proof_nonces_by_at ON proof_nonces (at);`,
  // Writes grouped: the calls that come while one round trip is under way go together in the next,
  // one statement and one commit (store/postgres/group.ts). rewardbus_settle is the one settlement
  // the ledger sent as text (the compare-and-set on the state, and to release an unsent payment on
  // the phase; the budget's share following the reservation; the audit row; the reward event).
  // The *_many functions make a group's calls in one statement, each as if alone, after taking the
  // locks the group needs: players' and addresses' locks, and players' event locks, only if free
  // (a call whose lock another transaction holds is answered busy, for a later group), and as
  // every writer does, the day's budget row before event locks, and entries by id: none waits on
  // another group, and no two writers wait in a cycle. The settlements' and inserts' statements
  // keep their plans for the session, made without sequential scans (SET enable_seqscan = off): a
  // plan kept from when the table was small would scan it all for a group's few ids long after
  // it had grown, and planned for each group (EXECUTE) they cost the server as much to plan as to
  // run. The claim facts are planned for each group: kept, they cost twice the CPU per claim.
  `CREATE FUNCTION rewardbus_settle(p_id text, p_from text[], p_state text, p_reason text, p_payment text, p_gamertag text, p_settled bigint,
       p_owner text, p_lease bigint, p_reserving text[], p_actor text, p_action text, p_at bigint, p_told text[], p_phase text)
   RETURNS TABLE (entry json, old_state text, event json)
   LANGUAGE plpgsql AS $$
   #variable_conflict use_column
   DECLARE
     v_day text;
     v_user text;
   BEGIN
     -- Locks in the order every writer takes them: the day's budget row (only when the
     -- settlement can move the budget: out of the reserving states, or into them), the
     -- player's event lock, then the entry.
     SELECT r.day, r.user_id INTO v_day, v_user FROM rewards r WHERE r.id = p_id;
     IF v_day IS NULL THEN RETURN; END IF;
     IF NOT (p_state = ANY(p_reserving)) OR NOT (p_from <@ p_reserving) THEN
       PERFORM 1 FROM budget bu WHERE bu.day = v_day FOR UPDATE;
     END IF;
     IF p_state = ANY(p_told) THEN PERFORM pg_advisory_xact_lock(hashtextextended('e:' || v_user, 1)); END IF;
     RETURN QUERY
       WITH old AS (SELECT r.id, r.state, r.budgeted FROM rewards r WHERE r.id = p_id AND r.state = ANY(p_from) AND (p_phase IS NULL OR r.phase = p_phase) FOR UPDATE),
       u AS (
         UPDATE rewards r SET state = p_state, reason = p_reason, payment_id = coalesce(p_payment, r.payment_id), gamertag = coalesce(p_gamertag, r.gamertag), settled_at = p_settled,
           -- An approved held entry goes on as sending: this relay owns its payment, under a lease.
           phase = CASE WHEN p_state = 'sending' THEN 'claimed' ELSE r.phase END, owner = p_owner, lease_until = p_lease,
           budgeted = CASE
             WHEN old.budgeted AND NOT (p_state = ANY(p_reserving)) THEN false
             WHEN NOT old.budgeted AND NOT (old.state = ANY(p_reserving)) AND p_state = ANY(p_reserving) AND EXISTS (SELECT 1 FROM budget bu WHERE bu.day = r.day) THEN true
             ELSE old.budgeted END
         FROM old WHERE r.id = old.id
         RETURNING r.*, old.state AS was, old.budgeted AS was_budgeted),
       b AS (UPDATE budget bu SET sats = bu.sats + CASE WHEN u.budgeted THEN u.sats ELSE -u.sats END FROM u WHERE bu.day = u.day AND u.budgeted <> u.was_budgeted),
       a AS (INSERT INTO audit (reward_id, actor, action, from_state, to_state, at) SELECT u.id, p_actor, p_action, u.was, u.state, p_at FROM u WHERE p_actor IS NOT NULL),
       ev AS (
         SELECT e.* FROM u, LATERAL rewardbus_append_event(u.user_id, 'reward',
           rewardbus_reward_record(u.id, u.idempotency_key, u.achievement_id, u.user_id, u.sats, u.state, u.reason, u.payment_id, u.created_at, u.settled_at), p_at) e
         WHERE u.state = ANY(p_told))
       SELECT row_to_json(u), u.was, (SELECT row_to_json(ev) FROM ev) FROM u;
   END $$;
   CREATE FUNCTION rewardbus_settle_many(p_items jsonb, p_reserving text[], p_told text[])
   RETURNS TABLE (i integer, busy boolean, entry json, old_state text, event json)
   LANGUAGE plpgsql SET enable_seqscan = off AS $$
   #variable_conflict use_column
   DECLARE
     v_ids text[];
     v_busy text[] := '{}';
     k record;
   BEGIN
     v_ids := ARRAY(SELECT x->>'id' FROM jsonb_array_elements(p_items) x);
     -- The budget rows of the days whose budget a settlement can move (out of the reserving states,
     -- or into them), as rewardbus_settle decides it: a group of payments paid leaves them to claims.
     PERFORM 1 FROM budget bu WHERE bu.day IN (
         SELECT r.day FROM rewards r JOIN jsonb_to_recordset(p_items) AS t(id text, "from" text[], state text) ON t.id = r.id
         WHERE r.id = ANY(v_ids) AND (NOT (t.state = ANY(p_reserving)) OR NOT (t."from" <@ p_reserving)))
       ORDER BY bu.day FOR UPDATE;
     -- A player's event lock another transaction holds (another relay's group) is not waited
     -- for: that player's settlements are answered busy, and go in a later group.
     FOR k IN SELECT DISTINCT r.user_id FROM rewards r WHERE r.id = ANY(v_ids) ORDER BY r.user_id LOOP
       IF NOT pg_try_advisory_xact_lock(hashtextextended('e:' || k.user_id, 1)) THEN v_busy := v_busy || k.user_id; END IF;
     END LOOP;
     -- The group's settlements in one statement, each a compare-and-set as rewardbus_settle makes
     -- it alone (a group holds one settlement of an entry): entries locked in id order, the
     -- budget moved by each day's sum, the audit rows, and the reward events in the group's order.
     RETURN QUERY
       WITH t AS (
         SELECT * FROM jsonb_to_recordset(p_items) AS t(i integer, id text, "from" text[], state text, reason text, payment text, gamertag text, settled bigint,
           owner text, lease bigint, actor text, action text, at bigint, phase text)),
       old AS (
         SELECT r.id, r.state, r.budgeted, t.i FROM rewards r JOIN t ON t.id = r.id
         WHERE r.id = ANY(v_ids) AND r.state = ANY(t."from") AND (t.phase IS NULL OR r.phase = t.phase) AND NOT (r.user_id = ANY(v_busy))
         ORDER BY r.id FOR UPDATE OF r),
       u AS (
         UPDATE rewards r SET state = t.state, reason = t.reason, payment_id = coalesce(t.payment, r.payment_id), gamertag = coalesce(t.gamertag, r.gamertag), settled_at = t.settled,
           phase = CASE WHEN t.state = 'sending' THEN 'claimed' ELSE r.phase END, owner = t.owner, lease_until = t.lease,
           budgeted = CASE
             WHEN old.budgeted AND NOT (t.state = ANY(p_reserving)) THEN false
             WHEN NOT old.budgeted AND NOT (old.state = ANY(p_reserving)) AND t.state = ANY(p_reserving) AND EXISTS (SELECT 1 FROM budget bu WHERE bu.day = r.day) THEN true
             ELSE old.budgeted END
         FROM old JOIN t ON t.i = old.i WHERE r.id = old.id
         RETURNING r.*, old.state AS was, old.budgeted AS was_budgeted, t.i, t.actor, t.action, t.at),
       b AS (
         UPDATE budget bu SET sats = bu.sats + d.sats
         FROM (SELECT u.day, sum(CASE WHEN u.budgeted THEN u.sats ELSE -u.sats END) AS sats FROM u WHERE u.budgeted <> u.was_budgeted GROUP BY u.day) d
         WHERE bu.day = d.day),
       a AS (INSERT INTO audit (reward_id, actor, action, from_state, to_state, at) SELECT u.id, u.actor, u.action, u.was, u.state, u.at FROM u WHERE u.actor IS NOT NULL ORDER BY u.i),
       ev AS (
         INSERT INTO events (user_id, type, data, created_at)
         SELECT u.user_id, 'reward', rewardbus_reward_record(u.id, u.idempotency_key, u.achievement_id, u.user_id, u.sats, u.state, u.reason, u.payment_id, u.created_at, u.settled_at), u.at
         FROM u WHERE u.state = ANY(p_told) ORDER BY u.i
         RETURNING *)
       SELECT u.i, false, row_to_json(u), u.was, (SELECT row_to_json(ev) FROM ev WHERE ev.data->>'id' = u.id)
       FROM u
       UNION ALL
       SELECT t.i, true, NULL::json, NULL::text, NULL::json FROM t JOIN rewards r ON r.id = t.id WHERE r.id = ANY(v_ids) AND r.user_id = ANY(v_busy);
   END $$;
   CREATE FUNCTION rewardbus_claim_facts_many(p_items jsonb)
   RETURNS TABLE (i integer, busy boolean, existing json, user_sats bigint, address_sats bigint, project_sats bigint, last_at bigint, nonce_fresh boolean)
   LANGUAGE plpgsql AS $$
   #variable_conflict use_column
${CLAIM_GROUP_LOCKS}     -- Planned for each group (EXECUTE), with the table as it is now.
     RETURN QUERY EXECUTE '
       WITH t AS (
         SELECT t.*, (''u:'' || t."user") = ANY($2) OR coalesce((''a:'' || t."lockAddress") = ANY($2), false) AS busy
         FROM jsonb_to_recordset($1) AS t(i integer, "user" text, key text, day text, achievement text, id text, at bigint,
           budgeted boolean, "userCap" boolean, address text, "lockAddress" text))
       SELECT t.i, true, NULL::json, 0::bigint, 0::bigint, NULL::bigint, NULL::bigint, false FROM t WHERE t.busy
       UNION ALL
       SELECT t.i, false,
         (SELECT row_to_json(r) FROM rewards r WHERE r.user_id = t."user" AND r.idempotency_key = t.key),
         CASE WHEN t."userCap" THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.user_id = t."user" AND r.day = t.day AND r.state IN (''sending'', ''paid'', ''needs_review'', ''held'')) ELSE 0 END::bigint,
         CASE WHEN t.address IS NOT NULL THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.address = t.address AND r.day = t.day AND r.state IN (''sending'', ''paid'', ''needs_review'', ''held'')) ELSE 0 END::bigint,
         CASE WHEN t.budgeted THEN (SELECT bu.sats FROM budget bu WHERE bu.day = t.day) END,
         (SELECT r.created_at FROM rewards r WHERE r.user_id = t."user" AND r.achievement_id = t.achievement AND (r.state IN (''sending'', ''paid'', ''needs_review'', ''held'')) IS TRUE ORDER BY r.created_at DESC LIMIT 1),
         false
       FROM t WHERE NOT t.busy'
     USING p_items, v_busy;
   END $$;
   CREATE FUNCTION rewardbus_claim_insert_many(p_items jsonb)
   RETURNS TABLE (i integer, entry json, event json)
   LANGUAGE plpgsql SET enable_seqscan = off AS $$
   #variable_conflict use_column
   DECLARE
     k record;
   BEGIN
     -- The event locks of the players told (a refusal), in player order, as every writer takes them
     -- after the budget row; then the group's entries, each day's budget share and the reward
     -- events in one statement, as rewardbus_claim_insert writes each alone.
     FOR k IN SELECT DISTINCT x->>'user' AS u FROM jsonb_array_elements(p_items) x WHERE (x->>'told')::boolean ORDER BY 1 LOOP
       PERFORM pg_advisory_xact_lock(hashtextextended('e:' || k.u, 1));
     END LOOP;
     RETURN QUERY
       WITH t AS (
         SELECT * FROM jsonb_to_recordset(p_items) AS t(i integer, id text, "user" text, key text, hash text, achievement text, sats integer, state text, reason text,
           occurred text, day text, at bigint, owner text, lease bigint, budgeted boolean, address text, told boolean)),
       r AS (
         INSERT INTO rewards (id, user_id, idempotency_key, request_hash, achievement_id, sats, state, phase, reason, occurred_at, day, created_at, owner, lease_until, budgeted, address)
         SELECT t.id, t."user", t.key, t.hash, t.achievement, t.sats, t.state, 'claimed', t.reason, t.occurred, t.day, t.at, t.owner, t.lease, t.budgeted, t.address
         FROM t ORDER BY t."user", t.i
         RETURNING *),
       b AS (UPDATE budget bu SET sats = bu.sats + d.sats FROM (SELECT r.day, sum(r.sats) AS sats FROM r WHERE r.budgeted GROUP BY r.day) d WHERE bu.day = d.day),
       ev AS (
         INSERT INTO events (user_id, type, data, created_at)
         SELECT r.user_id, 'reward', rewardbus_reward_record(r.id, r.idempotency_key, r.achievement_id, r.user_id, r.sats, r.state, r.reason, r.payment_id, r.created_at, r.settled_at), t.at
         FROM r JOIN t ON t.id = r.id WHERE t.told ORDER BY r.user_id, t.i
         RETURNING *)
       SELECT t.i, row_to_json(r), (SELECT row_to_json(ev) FROM ev WHERE ev.data->>'id' = r.id) FROM r JOIN t ON t.id = r.id;
   END $$;`,
  // No JIT in the functions that read the ledger. Once the rewards table is analyzed with a few
  // thousand rows a player, a group's estimated cost passes jit_above_cost (it counts every
  // subquery at 100 claims), and compiling the query took 30 ms of CPU for a statement that runs
  // in 1: a claim group took 41 ms. Their statements are all short lookups, which JIT never pays
  // back. A function made again later must say SET jit = off itself.
  `ALTER FUNCTION rewardbus_append_event SET jit = off;
   ALTER FUNCTION rewardbus_claim_facts SET jit = off;
   ALTER FUNCTION rewardbus_claim_insert SET jit = off;
   ALTER FUNCTION rewardbus_settle SET jit = off;
   ALTER FUNCTION rewardbus_settle_many SET jit = off;
   ALTER FUNCTION rewardbus_claim_facts_many SET jit = off;
   ALTER FUNCTION rewardbus_claim_insert_many SET jit = off;`,
  // One lifecycle (core/lifecycle.ts): `state` holds only its states, and one write primitive
  // applies every transition, claims and settlements alike, in place of the five statements and
  // functions that each wrote "state + reservation + audit + event" their own way.
  // rewardbus_apply takes a batch of changes (a single one is a batch of one): a new entry
  // (`insert`), or a compare-and-set of an entry from the states its transition leaves (`update`),
  // which may move its sats (a deferred claim decided again at today's price) and its day (a held
  // claim approved on a later day). The budget moves by exactly what each entry counted before and
  // counts after. Locks as every writer takes them: the days' budget rows in day order, then the
  // players' event locks (waited for, or with p_wait false only if free: a busy player's changes are
  // answered busy, for a later batch), then entries by id.
  `ALTER TABLE rewards ADD CONSTRAINT rewards_state CHECK (state IN (${STATE_LIST}));
   DROP FUNCTION rewardbus_settle(text, text[], text, text, text, text, bigint, text, bigint, text[], text, text, bigint, text[], text);
   DROP FUNCTION rewardbus_settle_many(jsonb, text[], text[]);
   DROP FUNCTION rewardbus_claim_insert(text, text, text, text, text, integer, text, text, text, text, bigint, text, bigint, boolean, text, boolean);
   DROP FUNCTION rewardbus_claim_insert_many(jsonb);
   DROP FUNCTION rewardbus_append_event(text, text, jsonb, bigint);
   CREATE FUNCTION rewardbus_apply(p_items jsonb, p_reserving text[], p_told text[], p_wait boolean)
   RETURNS TABLE (i integer, busy boolean, entry json, old_state text, event json)
   LANGUAGE plpgsql SET enable_seqscan = off SET jit = off SET lock_timeout = '5s' AS $$
   #variable_conflict use_column
   DECLARE
     v_ids text[];
     v_busy text[] := '{}';
     k record;
   BEGIN
     v_ids := ARRAY(SELECT x->>'id' FROM jsonb_array_elements(p_items) x WHERE x->>'op' = 'update');
     -- The budget rows of the days a change can move: out of the reserving states or into them, to
     -- another day or price, and the days new entries count on.
     PERFORM 1 FROM budget bu WHERE bu.day IN (
         SELECT r.day FROM rewards r JOIN jsonb_to_recordset(p_items) AS t(id text, op text, "from" text[], state text, day text, sats integer) ON t.id = r.id
         WHERE t.op = 'update' AND r.id = ANY(v_ids)
           AND (NOT (t.state = ANY(p_reserving)) OR NOT (t."from" <@ p_reserving) OR t.day IS NOT NULL OR t.sats IS NOT NULL)
         UNION
         SELECT t.day FROM jsonb_to_recordset(p_items) AS t(day text, budgeted boolean) WHERE t.day IS NOT NULL AND t.budgeted)
       ORDER BY bu.day FOR UPDATE;
     -- The event locks of the players told, in player order.
     FOR k IN
       SELECT DISTINCT coalesce(x->>'user', (SELECT r.user_id FROM rewards r WHERE r.id = x->>'id')) AS u
       FROM jsonb_array_elements(p_items) x WHERE x->>'state' = ANY(p_told) ORDER BY 1
     LOOP
       IF p_wait THEN PERFORM pg_advisory_xact_lock(hashtextextended('e:' || k.u, 1));
       ELSIF NOT pg_try_advisory_xact_lock(hashtextextended('e:' || k.u, 1)) THEN v_busy := v_busy || k.u;
       END IF;
     END LOOP;
     RETURN QUERY
       WITH t AS (
         SELECT * FROM jsonb_to_recordset(p_items) AS t(i integer, op text, id text, "from" text[], unsent boolean, "user" text, key text, hash text, achievement text,
           occurred text, state text, reason text, payment text, gamertag text, settled bigint, owner text, lease bigint, at bigint, sats integer, day text, created bigint,
           address text, "setAddress" boolean, budgeted boolean, actor text, action text)),
       old AS (
         SELECT r.id, r.state, r.budgeted, r.sats, r.day, t.i FROM rewards r JOIN t ON t.id = r.id
         WHERE t.op = 'update' AND r.id = ANY(v_ids) AND r.state = ANY(t."from") AND (NOT coalesce(t.unsent, false) OR r.phase = 'claimed') AND NOT (r.user_id = ANY(v_busy))
         ORDER BY r.id FOR UPDATE OF r),
       upd AS (
         UPDATE rewards r SET state = t.state, reason = t.reason, payment_id = coalesce(t.payment, r.payment_id), gamertag = coalesce(t.gamertag, r.gamertag),
           settled_at = t.settled, phase = CASE WHEN t.state = 'sending' THEN 'claimed' ELSE r.phase END, owner = t.owner, lease_until = t.lease,
           sats = coalesce(t.sats, r.sats), day = coalesce(t.day, r.day), created_at = coalesce(t.created, r.created_at),
           address = CASE WHEN coalesce(t."setAddress", false) THEN t.address ELSE r.address END,
           budgeted = coalesce(t.budgeted, CASE
             WHEN old.budgeted AND NOT (t.state = ANY(p_reserving)) THEN false
             WHEN NOT old.budgeted AND NOT (old.state = ANY(p_reserving)) AND t.state = ANY(p_reserving) AND EXISTS (SELECT 1 FROM budget bu WHERE bu.day = r.day) THEN true
             ELSE old.budgeted END)
         FROM old JOIN t ON t.i = old.i WHERE r.id = old.id
         RETURNING r.*, old.state AS was, old.budgeted AS was_budgeted, old.sats AS was_sats, old.day AS was_day, t.i, t.actor, t.action, t.at),
       ins AS (
         INSERT INTO rewards (id, user_id, idempotency_key, request_hash, achievement_id, sats, state, phase, reason, occurred_at, day, created_at, owner, lease_until, budgeted, address, gamertag)
         SELECT t.id, t."user", t.key, t.hash, t.achievement, t.sats, t.state, 'claimed', t.reason, t.occurred, t.day, t.created, t.owner, t.lease, t.budgeted, t.address, t.gamertag
         FROM t WHERE t.op = 'insert' ORDER BY t."user", t.i
         RETURNING *),
       u AS (
         SELECT upd.id, upd.user_id, upd.idempotency_key, upd.achievement_id, upd.sats, upd.state, upd.reason, upd.payment_id, upd.created_at, upd.settled_at, upd.day, upd.budgeted,
           upd.was, upd.was_budgeted, upd.was_sats, upd.was_day, upd.i, upd.actor, upd.action, upd.at, row_to_json(upd) AS entry
         FROM upd
         UNION ALL
         SELECT ins.id, ins.user_id, ins.idempotency_key, ins.achievement_id, ins.sats, ins.state, ins.reason, ins.payment_id, ins.created_at, ins.settled_at, ins.day, ins.budgeted,
           NULL::text, false, 0, NULL::text, t.i, NULL::text, NULL::text, t.at, row_to_json(ins)
         FROM ins JOIN t ON t.id = ins.id AND t.op = 'insert'),
       b AS (
         UPDATE budget bu SET sats = bu.sats + d.sats
         FROM (SELECT x.day, sum(x.s) AS sats FROM (
                 SELECT u.was_day AS day, -u.was_sats AS s FROM u WHERE u.was_budgeted
                 UNION ALL
                 SELECT u.day, u.sats FROM u WHERE u.budgeted) x
               GROUP BY x.day HAVING sum(x.s) <> 0) d
         WHERE bu.day = d.day),
       a AS (INSERT INTO audit (reward_id, actor, action, from_state, to_state, at) SELECT u.id, u.actor, u.action, u.was, u.state, u.at FROM u WHERE u.actor IS NOT NULL ORDER BY u.i),
       ev AS (
         INSERT INTO events (user_id, type, data, created_at)
         SELECT u.user_id, 'reward', rewardbus_reward_record(u.id, u.idempotency_key, u.achievement_id, u.user_id, u.sats, u.state, u.reason, u.payment_id, u.created_at, u.settled_at), u.at
         FROM u WHERE u.state = ANY(p_told) ORDER BY u.user_id, u.i
         RETURNING *)
       SELECT u.i, false, u.entry, u.was, (SELECT row_to_json(ev) FROM ev WHERE ev.data->>'id' = u.id) FROM u
       UNION ALL
       SELECT t.i, true, NULL::json, NULL::text, NULL::json FROM t JOIN rewards r ON r.id = t.id WHERE t.op = 'update' AND r.id = ANY(v_ids) AND r.user_id = ANY(v_busy);
   END $$;`,
  // Denials and deferrals (issue 34): a claim's facts also say when an operator last denied the
  // player this achievement (the denial's audit time; the refusal is decided in claim-decision.ts),
  // read by a partial index of denied entries, which are few. The two facts functions are made
  // again with that column, and the reserving states written from the lifecycle's table
  // (core/lifecycle.ts), not by hand. Deferred entries are pruned by age.
  `DROP FUNCTION rewardbus_claim_facts(text, text, text, text, text, text, bigint, boolean, boolean, text, text);
   DROP FUNCTION rewardbus_claim_facts_many(jsonb);
   CREATE INDEX rewards_denied ON rewards (user_id, achievement_id) WHERE state = 'rejected' AND reason = 'denied_by_operator';
   CREATE INDEX rewards_deferred ON rewards (created_at) WHERE state = 'deferred';
   CREATE FUNCTION rewardbus_claim_facts(p_user text, p_key text, p_day text, p_achievement text, p_nonce text, p_id text, p_at bigint,
       p_budgeted boolean, p_user_cap boolean, p_address text, p_lock_address text)
   RETURNS TABLE (existing json, user_sats bigint, address_sats bigint, project_sats bigint, last_at bigint, nonce_fresh boolean, last_denied_at bigint)
   LANGUAGE plpgsql SET jit = off SET lock_timeout = '5s' AS $$
   BEGIN
     PERFORM pg_advisory_xact_lock(hashtextextended('u:' || p_user, 0));
     IF p_lock_address IS NOT NULL THEN PERFORM pg_advisory_xact_lock(hashtextextended('a:' || p_lock_address, 0)); END IF;
     RETURN QUERY
       WITH n AS (
         INSERT INTO proof_nonces (nonce, reward_id, at)
         SELECT p_nonce, coalesce((SELECT r.id FROM rewards r WHERE r.user_id = p_user AND r.idempotency_key = p_key), p_id), p_at WHERE p_nonce IS NOT NULL
         ON CONFLICT DO NOTHING RETURNING 1),
       b AS (INSERT INTO budget AS bu (day, sats) SELECT p_day, 0 WHERE p_budgeted ON CONFLICT (day) DO UPDATE SET sats = bu.sats RETURNING bu.sats)
       SELECT
         (SELECT row_to_json(r) FROM rewards r WHERE r.user_id = p_user AND r.idempotency_key = p_key),
         CASE WHEN p_user_cap THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.user_id = p_user AND r.day = p_day AND r.state IN (${RESERVING_LIST})) ELSE 0 END::bigint,
         CASE WHEN p_address IS NOT NULL THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.address = p_address AND r.day = p_day AND r.state IN (${RESERVING_LIST})) ELSE 0 END::bigint,
         (SELECT b.sats FROM b),
         (SELECT r.created_at FROM rewards r WHERE r.user_id = p_user AND r.achievement_id = p_achievement AND r.state IN (${RESERVING_LIST}) ORDER BY r.created_at DESC LIMIT 1),
         EXISTS (SELECT 1 FROM n),
         (SELECT max(a.at) FROM rewards r JOIN audit a ON a.reward_id = r.id
          WHERE r.user_id = p_user AND r.achievement_id = p_achievement AND r.state = 'rejected' AND r.reason = 'denied_by_operator' AND a.to_state = 'rejected');
   END $$;
   CREATE FUNCTION rewardbus_claim_facts_many(p_items jsonb)
   RETURNS TABLE (i integer, busy boolean, existing json, user_sats bigint, address_sats bigint, project_sats bigint, last_at bigint, nonce_fresh boolean, last_denied_at bigint)
   LANGUAGE plpgsql SET jit = off SET lock_timeout = '5s' AS $$
   #variable_conflict use_column
${CLAIM_GROUP_LOCKS}     -- Planned for each group (EXECUTE), with the table as it is now.
     RETURN QUERY EXECUTE '
       WITH t AS (
         SELECT t.*, (''u:'' || t."user") = ANY($2) OR coalesce((''a:'' || t."lockAddress") = ANY($2), false) AS busy
         FROM jsonb_to_recordset($1) AS t(i integer, "user" text, key text, day text, achievement text, id text, at bigint,
           budgeted boolean, "userCap" boolean, address text, "lockAddress" text))
       SELECT t.i, true, NULL::json, 0::bigint, 0::bigint, NULL::bigint, NULL::bigint, false, NULL::bigint FROM t WHERE t.busy
       UNION ALL
       SELECT t.i, false,
         (SELECT row_to_json(r) FROM rewards r WHERE r.user_id = t."user" AND r.idempotency_key = t.key),
         CASE WHEN t."userCap" THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.user_id = t."user" AND r.day = t.day AND r.state IN (${RESERVING_QUOTED})) ELSE 0 END::bigint,
         CASE WHEN t.address IS NOT NULL THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.address = t.address AND r.day = t.day AND r.state IN (${RESERVING_QUOTED})) ELSE 0 END::bigint,
         CASE WHEN t.budgeted THEN (SELECT bu.sats FROM budget bu WHERE bu.day = t.day) END,
         (SELECT r.created_at FROM rewards r WHERE r.user_id = t."user" AND r.achievement_id = t.achievement AND (r.state IN (${RESERVING_QUOTED})) IS TRUE ORDER BY r.created_at DESC LIMIT 1),
         false,
         (SELECT max(a.at) FROM rewards r JOIN audit a ON a.reward_id = r.id WHERE r.user_id = t."user" AND r.achievement_id = t.achievement AND r.state = ''rejected''
            AND r.reason = ''denied_by_operator'' AND a.to_state = ''rejected'')
       FROM t WHERE NOT t.busy'
     USING p_items, v_busy;
   END $$;
`,
  // Balance mode (issue 36): what each entry is (a payout, a credit to the player's balance, a
  // withdrawal from it), read by the player's balance through its own index; `state` checked
  // against the lifecycle's states as they are now (`credited`), and the partial indexes of the
  // reserving states made again with them (a query naming `credited` could not use the old ones);
  // witnessed play, the game server's raises of the withdrawal allowance, and the guests merged into
  // players (rewardbus_apply may move a guest's credit to its player). A withdrawal's sats
  // left a balance: they count on no player's or address's day, no repeat rule and no budget, so
  // the claim facts read only rewards (`kind <> 'withdrawal'`), rewardbus_apply never budgets a
  // withdrawal, and the reward record says `"kind": "withdrawal"` as toRewardRecord does. Each
  // function is made again whole, with its own settings (SET jit = off, lock_timeout).
  `ALTER TABLE rewards ADD COLUMN kind text NOT NULL DEFAULT 'payout';
   ALTER TABLE rewards DROP CONSTRAINT rewards_state;
   ALTER TABLE rewards ADD CONSTRAINT rewards_state CHECK (state IN (${STATE_LIST}));
   ALTER TABLE rewards ADD CONSTRAINT rewards_kind CHECK (kind IN ('payout', 'credit', 'withdrawal'));
   CREATE INDEX rewards_balance ON rewards (user_id, kind, day) WHERE kind <> 'payout';
   DROP INDEX rewards_by_user_day;
   CREATE INDEX rewards_by_user_day ON rewards (user_id, day) WHERE state IN (${RESERVING_LIST});
   DROP INDEX rewards_by_address_day;
   CREATE INDEX rewards_by_address_day ON rewards (address, day) WHERE address IS NOT NULL AND state IN (${RESERVING_LIST});
   CREATE TABLE play_time (user_id text PRIMARY KEY, play_ms bigint NOT NULL, last_beat_at bigint NOT NULL);
   CREATE TABLE merged_guests (guest_id text PRIMARY KEY, user_id text NOT NULL, at bigint NOT NULL);
   CREATE TABLE allowance_raises (
     user_id text NOT NULL, idempotency_key text NOT NULL, sats bigint NOT NULL, reason text NOT NULL, at bigint NOT NULL,
     PRIMARY KEY (user_id, idempotency_key));
   DROP FUNCTION rewardbus_reward_record(text, text, text, text, integer, text, text, text, bigint, bigint);
   CREATE FUNCTION rewardbus_reward_record(p_id text, p_key text, p_achievement text, p_user text, p_sats integer, p_state text, p_reason text, p_payment text,
       p_created bigint, p_settled bigint, p_kind text)
   RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
   BEGIN
     RETURN jsonb_strip_nulls(jsonb_build_object(
       'id', p_id, 'idempotencyKey', p_key, 'achievementId', p_achievement, 'userId', p_user, 'sats', p_sats,
       'status', CASE WHEN p_state IN ('sending', 'deferred') THEN 'pending' ELSE p_state END,
       'reason', CASE WHEN p_state <> 'sending' AND p_reason <> '' THEN p_reason END,
       'paymentId', NULLIF(p_payment, ''),
       'createdAt', rewardbus_iso(p_created),
       'settledAt', CASE WHEN p_settled <> 0 THEN rewardbus_iso(p_settled) END,
       'kind', CASE WHEN p_kind = 'withdrawal' THEN 'withdrawal' END));
   END $$;
   CREATE OR REPLACE FUNCTION rewardbus_apply(p_items jsonb, p_reserving text[], p_told text[], p_wait boolean)
   RETURNS TABLE (i integer, busy boolean, entry json, old_state text, event json)
   LANGUAGE plpgsql SET enable_seqscan = off SET jit = off SET lock_timeout = '5s' AS $$
   #variable_conflict use_column
   DECLARE
     v_ids text[];
     v_busy text[] := '{}';
     k record;
   BEGIN
     v_ids := ARRAY(SELECT x->>'id' FROM jsonb_array_elements(p_items) x WHERE x->>'op' = 'update');
     -- The budget rows of the days a change can move: out of the reserving states or into them, to
     -- another day or price, and the days new entries count on.
     PERFORM 1 FROM budget bu WHERE bu.day IN (
         SELECT r.day FROM rewards r JOIN jsonb_to_recordset(p_items) AS t(id text, op text, "from" text[], state text, day text, sats integer) ON t.id = r.id
         WHERE t.op = 'update' AND r.id = ANY(v_ids)
           AND (NOT (t.state = ANY(p_reserving)) OR NOT (t."from" <@ p_reserving) OR t.day IS NOT NULL OR t.sats IS NOT NULL)
         UNION
         SELECT t.day FROM jsonb_to_recordset(p_items) AS t(day text, budgeted boolean) WHERE t.day IS NOT NULL AND t.budgeted)
       ORDER BY bu.day FOR UPDATE;
     -- The event locks of the players told, in player order.
     FOR k IN
       SELECT DISTINCT coalesce(x->>'user', (SELECT r.user_id FROM rewards r WHERE r.id = x->>'id')) AS u
       FROM jsonb_array_elements(p_items) x WHERE x->>'state' = ANY(p_told) ORDER BY 1
     LOOP
       IF p_wait THEN PERFORM pg_advisory_xact_lock(hashtextextended('e:' || k.u, 1));
       ELSIF NOT pg_try_advisory_xact_lock(hashtextextended('e:' || k.u, 1)) THEN v_busy := v_busy || k.u;
       END IF;
     END LOOP;
     RETURN QUERY
       WITH t AS (
         SELECT * FROM jsonb_to_recordset(p_items) AS t(i integer, op text, id text, "from" text[], unsent boolean, "user" text, key text, hash text, achievement text,
           occurred text, state text, reason text, payment text, gamertag text, settled bigint, owner text, lease bigint, at bigint, sats integer, day text, created bigint,
           address text, "setAddress" boolean, budgeted boolean, actor text, action text, kind text)),
       old AS (
         SELECT r.id, r.state, r.budgeted, r.sats, r.day, t.i FROM rewards r JOIN t ON t.id = r.id
         WHERE t.op = 'update' AND r.id = ANY(v_ids) AND r.state = ANY(t."from") AND (NOT coalesce(t.unsent, false) OR r.phase = 'claimed') AND NOT (r.user_id = ANY(v_busy))
         ORDER BY r.id FOR UPDATE OF r),
       upd AS (
         UPDATE rewards r SET state = t.state, reason = t.reason, payment_id = coalesce(t.payment, r.payment_id), gamertag = coalesce(t.gamertag, r.gamertag),
           settled_at = t.settled, phase = CASE WHEN t.state = 'sending' THEN 'claimed' ELSE r.phase END, owner = t.owner, lease_until = t.lease,
           sats = coalesce(t.sats, r.sats), day = coalesce(t.day, r.day), created_at = coalesce(t.created, r.created_at),
           address = CASE WHEN coalesce(t."setAddress", false) THEN t.address ELSE r.address END, kind = coalesce(t.kind, r.kind),
           -- A guest's credit merged into the player who linked moves to that player.
           user_id = coalesce(t."user", r.user_id),
           -- A withdrawal is never in the budget: its sats were counted when they were credited.
           budgeted = CASE WHEN r.kind = 'withdrawal' THEN false ELSE coalesce(t.budgeted, CASE
             WHEN old.budgeted AND NOT (t.state = ANY(p_reserving)) THEN false
             WHEN NOT old.budgeted AND NOT (old.state = ANY(p_reserving)) AND t.state = ANY(p_reserving) AND EXISTS (SELECT 1 FROM budget bu WHERE bu.day = r.day) THEN true
             ELSE old.budgeted END) END
         FROM old JOIN t ON t.i = old.i WHERE r.id = old.id
         RETURNING r.*, old.state AS was, old.budgeted AS was_budgeted, old.sats AS was_sats, old.day AS was_day, t.i, t.actor, t.action, t.at),
       ins AS (
         INSERT INTO rewards (id, user_id, idempotency_key, request_hash, achievement_id, sats, state, phase, reason, occurred_at, day, created_at, owner, lease_until, budgeted,
           address, gamertag, kind)
         SELECT t.id, t."user", t.key, t.hash, t.achievement, t.sats, t.state, 'claimed', t.reason, t.occurred, t.day, t.created, t.owner, t.lease,
           t.budgeted AND coalesce(t.kind, 'payout') <> 'withdrawal', t.address, t.gamertag, coalesce(t.kind, 'payout')
         FROM t WHERE t.op = 'insert' ORDER BY t."user", t.i
         RETURNING *),
       u AS (
         SELECT upd.id, upd.user_id, upd.idempotency_key, upd.achievement_id, upd.sats, upd.state, upd.reason, upd.payment_id, upd.created_at, upd.settled_at, upd.day,
           upd.budgeted,
           upd.kind, upd.was, upd.was_budgeted, upd.was_sats, upd.was_day, upd.i, upd.actor, upd.action, upd.at, row_to_json(upd) AS entry
         FROM upd
         UNION ALL
         SELECT ins.id, ins.user_id, ins.idempotency_key, ins.achievement_id, ins.sats, ins.state, ins.reason, ins.payment_id, ins.created_at, ins.settled_at, ins.day,
           ins.budgeted,
           ins.kind, NULL::text, false, 0, NULL::text, t.i, NULL::text, NULL::text, t.at, row_to_json(ins)
         FROM ins JOIN t ON t.id = ins.id AND t.op = 'insert'),
       b AS (
         UPDATE budget bu SET sats = bu.sats + d.sats
         FROM (SELECT x.day, sum(x.s) AS sats FROM (
                 SELECT u.was_day AS day, -u.was_sats AS s FROM u WHERE u.was_budgeted
                 UNION ALL
                 SELECT u.day, u.sats FROM u WHERE u.budgeted) x
               GROUP BY x.day HAVING sum(x.s) <> 0) d
         WHERE bu.day = d.day),
       a AS (INSERT INTO audit (reward_id, actor, action, from_state, to_state, at) SELECT u.id, u.actor, u.action, u.was, u.state,
         u.at FROM u WHERE u.actor IS NOT NULL ORDER BY u.i),
       ev AS (
         INSERT INTO events (user_id, type, data, created_at)
         SELECT u.user_id, 'reward',
           rewardbus_reward_record(u.id, u.idempotency_key, u.achievement_id, u.user_id, u.sats, u.state, u.reason, u.payment_id, u.created_at, u.settled_at, u.kind), u.at
         FROM u WHERE u.state = ANY(p_told) ORDER BY u.user_id, u.i
         RETURNING *)
       SELECT u.i, false, u.entry, u.was, (SELECT row_to_json(ev) FROM ev WHERE ev.data->>'id' = u.id) FROM u
       UNION ALL
       SELECT t.i, true, NULL::json, NULL::text, NULL::json FROM t JOIN rewards r ON r.id = t.id WHERE t.op = 'update' AND r.id = ANY(v_ids) AND r.user_id = ANY(v_busy);
   END $$;
   CREATE OR REPLACE FUNCTION rewardbus_claim_facts(p_user text, p_key text, p_day text, p_achievement text, p_nonce text, p_id text, p_at bigint,
       p_budgeted boolean, p_user_cap boolean, p_address text, p_lock_address text)
   RETURNS TABLE (existing json, user_sats bigint, address_sats bigint, project_sats bigint, last_at bigint, nonce_fresh boolean, last_denied_at bigint)
   LANGUAGE plpgsql SET jit = off SET lock_timeout = '5s' AS $$
   BEGIN
     PERFORM pg_advisory_xact_lock(hashtextextended('u:' || p_user, 0));
     IF p_lock_address IS NOT NULL THEN PERFORM pg_advisory_xact_lock(hashtextextended('a:' || p_lock_address, 0)); END IF;
     RETURN QUERY
       WITH n AS (
         INSERT INTO proof_nonces (nonce, reward_id, at)
         SELECT p_nonce, coalesce((SELECT r.id FROM rewards r WHERE r.user_id = p_user AND r.idempotency_key = p_key), p_id), p_at WHERE p_nonce IS NOT NULL
         ON CONFLICT DO NOTHING RETURNING 1),
       b AS (INSERT INTO budget AS bu (day, sats) SELECT p_day, 0 WHERE p_budgeted ON CONFLICT (day) DO UPDATE SET sats = bu.sats RETURNING bu.sats)
       SELECT
         (SELECT row_to_json(r) FROM rewards r WHERE r.user_id = p_user AND r.idempotency_key = p_key),
         CASE WHEN p_user_cap THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.user_id = p_user AND r.day = p_day AND r.state IN (${RESERVING_LIST}) AND r.kind <> 'withdrawal') ELSE 0 END::bigint,
         CASE WHEN p_address IS NOT NULL THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.address = p_address AND r.day = p_day AND r.state IN (${RESERVING_LIST}) AND r.kind <> 'withdrawal') ELSE 0 END::bigint,
         (SELECT b.sats FROM b),
         (SELECT r.created_at FROM rewards r WHERE r.user_id = p_user AND r.achievement_id = p_achievement AND r.state IN (${RESERVING_LIST}) AND r.kind <> 'withdrawal' ORDER BY r.created_at DESC LIMIT 1),
         EXISTS (SELECT 1 FROM n),
         (SELECT max(a.at) FROM rewards r JOIN audit a ON a.reward_id = r.id
          WHERE r.user_id = p_user AND r.achievement_id = p_achievement AND r.state = 'rejected' AND r.reason = 'denied_by_operator' AND a.to_state = 'rejected');
   END $$;
   CREATE OR REPLACE FUNCTION rewardbus_claim_facts_many(p_items jsonb)
   RETURNS TABLE (i integer, busy boolean, existing json, user_sats bigint, address_sats bigint, project_sats bigint, last_at bigint, nonce_fresh boolean, last_denied_at bigint)
   LANGUAGE plpgsql SET jit = off SET lock_timeout = '5s' AS $$
   #variable_conflict use_column
${CLAIM_GROUP_LOCKS}     -- Planned for each group (EXECUTE), with the table as it is now.
     RETURN QUERY EXECUTE '
       WITH t AS (
         SELECT t.*, (''u:'' || t."user") = ANY($2) OR coalesce((''a:'' || t."lockAddress") = ANY($2), false) AS busy
         FROM jsonb_to_recordset($1) AS t(i integer, "user" text, key text, day text, achievement text, id text, at bigint,
           budgeted boolean, "userCap" boolean, address text, "lockAddress" text))
       SELECT t.i, true, NULL::json, 0::bigint, 0::bigint, NULL::bigint, NULL::bigint, false, NULL::bigint FROM t WHERE t.busy
       UNION ALL
       SELECT t.i, false,
         (SELECT row_to_json(r) FROM rewards r WHERE r.user_id = t."user" AND r.idempotency_key = t.key),
         CASE WHEN t."userCap" THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.user_id = t."user" AND r.day = t.day AND r.state IN (${RESERVING_QUOTED}) AND r.kind <> ''withdrawal'') ELSE 0 END::bigint,
         CASE WHEN t.address IS NOT NULL THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.address = t.address AND r.day = t.day AND r.state IN (${RESERVING_QUOTED}) AND r.kind <> ''withdrawal'') ELSE 0 END::bigint,
         CASE WHEN t.budgeted THEN (SELECT bu.sats FROM budget bu WHERE bu.day = t.day) END,
         (SELECT r.created_at FROM rewards r WHERE r.user_id = t."user" AND r.achievement_id = t.achievement AND (r.state IN (${RESERVING_QUOTED})) IS TRUE AND r.kind <> ''withdrawal'' ORDER BY r.created_at DESC LIMIT 1),
         false,
         (SELECT max(a.at) FROM rewards r JOIN audit a ON a.reward_id = r.id WHERE r.user_id = t."user" AND r.achievement_id = t.achievement AND r.state = ''rejected''
            AND r.reason = ''denied_by_operator'' AND a.to_state = ''rejected'')
       FROM t WHERE NOT t.busy'
     USING p_items, v_busy;
   END $$;`,
  // What a reward's amount was decided by, beyond its achievement (issues 37 and 38): the price
  // used (usd, btcUsd), a streak's day, a tournament's period and place, a referral's side. One
  // column of terms the record carries as they are, so a new program adds no column and no
  // function; rewardbus_apply writes them and rewardbus_reward_record spreads them on the record.
  `ALTER TABLE rewards ADD COLUMN terms jsonb;
   DROP FUNCTION rewardbus_reward_record(text, text, text, text, integer, text, text, text, bigint, bigint, text);
   CREATE FUNCTION rewardbus_reward_record(p_id text, p_key text, p_achievement text, p_user text, p_sats integer, p_state text, p_reason text, p_payment text,
       p_created bigint, p_settled bigint, p_kind text, p_terms jsonb)
   RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
   BEGIN
     RETURN jsonb_strip_nulls(jsonb_build_object(
       'id', p_id, 'idempotencyKey', p_key, 'achievementId', p_achievement, 'userId', p_user, 'sats', p_sats,
       'status', CASE WHEN p_state IN ('sending', 'deferred') THEN 'pending' ELSE p_state END,
       'reason', CASE WHEN p_state <> 'sending' AND p_reason <> '' THEN p_reason END,
       'paymentId', NULLIF(p_payment, ''),
       'createdAt', rewardbus_iso(p_created),
       'settledAt', CASE WHEN p_settled <> 0 THEN rewardbus_iso(p_settled) END,
       'kind', CASE WHEN p_kind = 'withdrawal' THEN 'withdrawal' END)) || coalesce(p_terms, '{}'::jsonb);
   END $$;
   CREATE OR REPLACE FUNCTION rewardbus_apply(p_items jsonb, p_reserving text[], p_told text[], p_wait boolean)
   RETURNS TABLE (i integer, busy boolean, entry json, old_state text, event json)
   LANGUAGE plpgsql SET enable_seqscan = off SET jit = off SET lock_timeout = '5s' AS $$
   #variable_conflict use_column
   DECLARE
     v_busy text[] := '{}';
     k record;
   BEGIN
     -- The budget rows of the days a change can move: out of the reserving states or into them, to
     -- another day or price, and the days new entries count on.
     PERFORM 1 FROM budget bu WHERE bu.day IN (
         SELECT r.day FROM rewards r JOIN jsonb_to_recordset(p_items) AS t(id text, op text, "from" text[], state text, day text, sats integer) ON t.id = r.id
         WHERE t.op = 'update'
           AND (NOT (t.state = ANY(p_reserving)) OR NOT (t."from" <@ p_reserving) OR t.day IS NOT NULL OR t.sats IS NOT NULL)
         UNION
         SELECT t.day FROM jsonb_to_recordset(p_items) AS t(day text, budgeted boolean) WHERE t.day IS NOT NULL AND t.budgeted)
       ORDER BY bu.day FOR UPDATE;
     -- The event locks of the players told, in player order.
     FOR k IN
       SELECT DISTINCT coalesce(x->>'user', (SELECT r.user_id FROM rewards r WHERE r.id = x->>'id')) AS u
       FROM jsonb_array_elements(p_items) x WHERE x->>'state' = ANY(p_told) ORDER BY 1
     LOOP
       IF p_wait THEN PERFORM pg_advisory_xact_lock(hashtextextended('e:' || k.u, 1));
       ELSIF NOT pg_try_advisory_xact_lock(hashtextextended('e:' || k.u, 1)) THEN v_busy := v_busy || k.u;
       END IF;
     END LOOP;
     RETURN QUERY
       WITH t AS (
         SELECT * FROM jsonb_to_recordset(p_items) AS t(i integer, op text, id text, "from" text[], unsent boolean, "user" text, key text, hash text, achievement text,
           occurred text, state text, reason text, payment text, gamertag text, settled bigint, owner text, lease bigint, at bigint, sats integer, day text, created bigint,
           address text, "setAddress" boolean, budgeted boolean, actor text, action text, kind text, terms jsonb)),
       old AS (
         SELECT r.id, r.state, r.budgeted, r.sats, r.day, t.i FROM rewards r JOIN t ON t.id = r.id
         WHERE t.op = 'update' AND r.state = ANY(t."from") AND (NOT coalesce(t.unsent, false) OR r.phase = 'claimed') AND NOT (r.user_id = ANY(v_busy))
         ORDER BY r.id FOR UPDATE OF r),
       upd AS (
         UPDATE rewards r SET state = t.state, reason = t.reason, payment_id = coalesce(t.payment, r.payment_id), gamertag = coalesce(t.gamertag, r.gamertag),
           settled_at = t.settled, phase = CASE WHEN t.state = 'sending' THEN 'claimed' ELSE r.phase END, owner = t.owner, lease_until = t.lease,
           sats = coalesce(t.sats, r.sats), day = coalesce(t.day, r.day), created_at = coalesce(t.created, r.created_at),
           address = CASE WHEN coalesce(t."setAddress", false) THEN t.address ELSE r.address END, kind = coalesce(t.kind, r.kind), terms = coalesce(t.terms, r.terms),
           -- A guest's credit merged into the player who linked moves to that player.
           user_id = coalesce(t."user", r.user_id),
           -- A withdrawal is never in the budget: its sats were counted when they were credited.
           budgeted = CASE WHEN r.kind = 'withdrawal' THEN false ELSE coalesce(t.budgeted, CASE
             WHEN old.budgeted AND NOT (t.state = ANY(p_reserving)) THEN false
             WHEN NOT old.budgeted AND NOT (old.state = ANY(p_reserving)) AND t.state = ANY(p_reserving) AND EXISTS (SELECT 1 FROM budget bu WHERE bu.day = r.day) THEN true
             ELSE old.budgeted END) END
         FROM old JOIN t ON t.i = old.i WHERE r.id = old.id
         RETURNING r.*, old.state AS was, old.budgeted AS was_budgeted, old.sats AS was_sats, old.day AS was_day, t.i, t.actor, t.action, t.at),
       ins AS (
         INSERT INTO rewards (id, user_id, idempotency_key, request_hash, achievement_id, sats, state, phase, reason, occurred_at, day, created_at, owner, lease_until, budgeted,
           address, gamertag, kind, terms)
         SELECT t.id, t."user", t.key, t.hash, t.achievement, t.sats, t.state, 'claimed', t.reason, t.occurred, t.day, t.created, t.owner, t.lease,
           t.budgeted AND coalesce(t.kind, 'payout') <> 'withdrawal', t.address, t.gamertag, coalesce(t.kind, 'payout'), t.terms
         FROM t WHERE t.op = 'insert' ORDER BY t."user", t.i
         RETURNING *),
       u AS (
         SELECT upd.id, upd.user_id, upd.idempotency_key, upd.achievement_id, upd.sats, upd.state, upd.reason, upd.payment_id, upd.created_at, upd.settled_at, upd.day,
           upd.budgeted,
           upd.kind, upd.terms, upd.was, upd.was_budgeted, upd.was_sats, upd.was_day, upd.i, upd.actor, upd.action, upd.at, row_to_json(upd) AS entry
         FROM upd
         UNION ALL
         SELECT ins.id, ins.user_id, ins.idempotency_key, ins.achievement_id, ins.sats, ins.state, ins.reason, ins.payment_id, ins.created_at, ins.settled_at, ins.day,
           ins.budgeted,
           ins.kind, ins.terms, NULL::text, false, 0, NULL::text, t.i, NULL::text, NULL::text, t.at, row_to_json(ins)
         FROM ins JOIN t ON t.id = ins.id AND t.op = 'insert'),
       b AS (
         UPDATE budget bu SET sats = bu.sats + d.sats
         FROM (SELECT x.day, sum(x.s) AS sats FROM (
                 SELECT u.was_day AS day, -u.was_sats AS s FROM u WHERE u.was_budgeted
                 UNION ALL
                 SELECT u.day, u.sats FROM u WHERE u.budgeted) x
               GROUP BY x.day HAVING sum(x.s) <> 0) d
         WHERE bu.day = d.day),
       a AS (INSERT INTO audit (reward_id, actor, action, from_state, to_state, at) SELECT u.id, u.actor, u.action, u.was, u.state,
         u.at FROM u WHERE u.actor IS NOT NULL ORDER BY u.i),
       ev AS (
         INSERT INTO events (user_id, type, data, created_at)
         SELECT u.user_id, 'reward',
           rewardbus_reward_record(u.id, u.idempotency_key, u.achievement_id, u.user_id, u.sats, u.state, u.reason, u.payment_id, u.created_at, u.settled_at, u.kind, u.terms), u.at
         FROM u WHERE u.state = ANY(p_told) ORDER BY u.user_id, u.i
         RETURNING *, data->>'id' AS rid)
       -- Each change's event found by a join on its entry's id: a lookup per change read every
       -- event of the batch, which made a batch of 1,000 (a guest merged, a tournament) take seconds.
       SELECT u.i, false, u.entry, u.was,
         CASE WHEN ev.id IS NOT NULL THEN json_build_object('id', ev.id, 'user_id', ev.user_id, 'type', ev.type, 'data', ev.data, 'created_at', ev.created_at) END
       FROM u LEFT JOIN ev ON ev.rid = u.id
       UNION ALL
       SELECT t.i, true, NULL::json, NULL::text, NULL::json FROM t JOIN rewards r ON r.id = t.id WHERE t.op = 'update' AND r.user_id = ANY(v_busy);
   END $$;`,
  // Tournaments (issue 37, its own step): each period's results posted once (their ranking's hash,
  // when, by whom); the players who linked with this relay, whom a ranking may name (by userId, or
  // by the gamertag they last linked with); and the players' locks taken in one call, in a stable
  // order (a ranking of a thousand places is one round trip, and two posts never deadlock).
  `CREATE TABLE tournament_results (
     tournament_id text NOT NULL, period text NOT NULL, ranking_hash text NOT NULL, places integer NOT NULL, at bigint NOT NULL, by text NOT NULL,
     PRIMARY KEY (tournament_id, period));
   CREATE TABLE linked_players (user_id text PRIMARY KEY, gamertag text NOT NULL, linked_at bigint NOT NULL);
   CREATE INDEX linked_players_by_gamertag ON linked_players (gamertag, linked_at);
   CREATE FUNCTION rewardbus_lock_players(p_users text[]) RETURNS integer
   LANGUAGE plpgsql SET jit = off SET lock_timeout = '5s' AS $$
   DECLARE
     u text;
     n integer := 0;
   BEGIN
     FOR u IN SELECT DISTINCT x FROM unnest(p_users) x ORDER BY 1 LOOP
       PERFORM pg_advisory_xact_lock(hashtextextended('u:' || u, 0));
       n := n + 1;
     END LOOP;
     RETURN n;
   END $$;`,
  // Issue 38, dollar budgets and caps: each entry counts its dollar value (its terms' `usd`, to
  // the micro-dollar, by rewardbus_usd_micros, the same rule as core/price.ts's entryUsdMicros).
  // The day's budget row keeps the dollars beside the sats (usd_micros), moved by rewardbus_apply
  // exactly as its sats are; the claim's facts read the player's and the budget's dollars too.
  // rewardbus_apply is the latest (migration 15) whole, with the old terms released from the
  // budget; the facts functions are migration 14's whole, with two columns more (so dropped first).
  `ALTER TABLE budget ADD COLUMN usd_micros bigint NOT NULL DEFAULT 0;
   CREATE FUNCTION rewardbus_usd_micros(p_terms jsonb) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
     SELECT coalesce(round((p_terms->>'usd')::numeric * 1000000), 0)::bigint
   $$;
   DROP FUNCTION rewardbus_claim_facts(text, text, text, text, text, text, bigint, boolean, boolean, text, text);
   DROP FUNCTION rewardbus_claim_facts_many(jsonb);
   CREATE FUNCTION rewardbus_claim_facts(p_user text, p_key text, p_day text, p_achievement text, p_nonce text, p_id text, p_at bigint,
       p_budgeted boolean, p_user_cap boolean, p_address text, p_lock_address text)
   RETURNS TABLE (existing json, user_sats bigint, address_sats bigint, project_sats bigint, last_at bigint, nonce_fresh boolean, last_denied_at bigint,
       user_usd_micros bigint, project_usd_micros bigint)
   LANGUAGE plpgsql SET jit = off SET lock_timeout = '5s' AS $$
   BEGIN
     PERFORM pg_advisory_xact_lock(hashtextextended('u:' || p_user, 0));
     IF p_lock_address IS NOT NULL THEN PERFORM pg_advisory_xact_lock(hashtextextended('a:' || p_lock_address, 0)); END IF;
     RETURN QUERY
       WITH n AS (
         INSERT INTO proof_nonces (nonce, reward_id, at)
         SELECT p_nonce, coalesce((SELECT r.id FROM rewards r WHERE r.user_id = p_user AND r.idempotency_key = p_key), p_id), p_at WHERE p_nonce IS NOT NULL
         ON CONFLICT DO NOTHING RETURNING 1),
       b AS (INSERT INTO budget AS bu (day, sats) SELECT p_day, 0 WHERE p_budgeted ON CONFLICT (day) DO UPDATE SET sats = bu.sats RETURNING bu.sats, bu.usd_micros)
       SELECT
         (SELECT row_to_json(r) FROM rewards r WHERE r.user_id = p_user AND r.idempotency_key = p_key),
         CASE WHEN p_user_cap THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.user_id = p_user AND r.day = p_day AND r.state IN (${RESERVING_LIST}) AND r.kind <> 'withdrawal') ELSE 0 END::bigint,
         CASE WHEN p_address IS NOT NULL THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.address = p_address AND r.day = p_day AND r.state IN (${RESERVING_LIST}) AND r.kind <> 'withdrawal') ELSE 0 END::bigint,
         (SELECT b.sats FROM b),
         (SELECT r.created_at FROM rewards r WHERE r.user_id = p_user AND r.achievement_id = p_achievement AND r.state IN (${RESERVING_LIST}) AND r.kind <> 'withdrawal' ORDER BY r.created_at DESC LIMIT 1),
         EXISTS (SELECT 1 FROM n),
         (SELECT max(a.at) FROM rewards r JOIN audit a ON a.reward_id = r.id
          WHERE r.user_id = p_user AND r.achievement_id = p_achievement AND r.state = 'rejected' AND r.reason = 'denied_by_operator' AND a.to_state = 'rejected'),
         CASE WHEN p_user_cap THEN (SELECT coalesce(sum(rewardbus_usd_micros(r.terms)), 0) FROM rewards r
           WHERE r.user_id = p_user AND r.day = p_day AND r.state IN (${RESERVING_LIST}) AND r.kind <> 'withdrawal') ELSE 0 END::bigint,
         (SELECT b.usd_micros FROM b);
   END $$;
   CREATE FUNCTION rewardbus_claim_facts_many(p_items jsonb)
   RETURNS TABLE (i integer, busy boolean, existing json, user_sats bigint, address_sats bigint, project_sats bigint, last_at bigint, nonce_fresh boolean, last_denied_at bigint,
       user_usd_micros bigint, project_usd_micros bigint)
   LANGUAGE plpgsql SET jit = off SET lock_timeout = '5s' AS $$
   #variable_conflict use_column
${CLAIM_GROUP_LOCKS}     -- Planned for each group (EXECUTE), with the table as it is now.
     RETURN QUERY EXECUTE '
       WITH t AS (
         SELECT t.*, (''u:'' || t."user") = ANY($2) OR coalesce((''a:'' || t."lockAddress") = ANY($2), false) AS busy
         FROM jsonb_to_recordset($1) AS t(i integer, "user" text, key text, day text, achievement text, id text, at bigint,
           budgeted boolean, "userCap" boolean, address text, "lockAddress" text))
       SELECT t.i, true, NULL::json, 0::bigint, 0::bigint, NULL::bigint, NULL::bigint, false, NULL::bigint, 0::bigint, NULL::bigint FROM t WHERE t.busy
       UNION ALL
       SELECT t.i, false,
         (SELECT row_to_json(r) FROM rewards r WHERE r.user_id = t."user" AND r.idempotency_key = t.key),
         CASE WHEN t."userCap" THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.user_id = t."user" AND r.day = t.day AND r.state IN (${RESERVING_QUOTED}) AND r.kind <> ''withdrawal'') ELSE 0 END::bigint,
         CASE WHEN t.address IS NOT NULL THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.address = t.address AND r.day = t.day AND r.state IN (${RESERVING_QUOTED}) AND r.kind <> ''withdrawal'') ELSE 0 END::bigint,
         CASE WHEN t.budgeted THEN (SELECT bu.sats FROM budget bu WHERE bu.day = t.day) END,
         (SELECT r.created_at FROM rewards r WHERE r.user_id = t."user" AND r.achievement_id = t.achievement AND (r.state IN (${RESERVING_QUOTED})) IS TRUE AND r.kind <> ''withdrawal'' ORDER BY r.created_at DESC LIMIT 1),
         false,
         (SELECT max(a.at) FROM rewards r JOIN audit a ON a.reward_id = r.id WHERE r.user_id = t."user" AND r.achievement_id = t.achievement AND r.state = ''rejected''
            AND r.reason = ''denied_by_operator'' AND a.to_state = ''rejected''),
         CASE WHEN t."userCap" THEN (SELECT coalesce(sum(rewardbus_usd_micros(r.terms)), 0) FROM rewards r
           WHERE r.user_id = t."user" AND r.day = t.day AND r.state IN (${RESERVING_QUOTED}) AND r.kind <> ''withdrawal'') ELSE 0 END::bigint,
         CASE WHEN t.budgeted THEN (SELECT bu.usd_micros FROM budget bu WHERE bu.day = t.day) END
       FROM t WHERE NOT t.busy'
     USING p_items, v_busy;
   END $$;
   CREATE OR REPLACE FUNCTION rewardbus_apply(p_items jsonb, p_reserving text[], p_told text[], p_wait boolean)
   RETURNS TABLE (i integer, busy boolean, entry json, old_state text, event json)
   LANGUAGE plpgsql SET enable_seqscan = off SET jit = off SET lock_timeout = '5s' AS $$
   #variable_conflict use_column
   DECLARE
     v_busy text[] := '{}';
     k record;
   BEGIN
     -- The budget rows of the days a change can move: out of the reserving states or into them, to
     -- another day or price, and the days new entries count on.
     PERFORM 1 FROM budget bu WHERE bu.day IN (
         SELECT r.day FROM rewards r JOIN jsonb_to_recordset(p_items) AS t(id text, op text, "from" text[], state text, day text, sats integer) ON t.id = r.id
         WHERE t.op = 'update'
           AND (NOT (t.state = ANY(p_reserving)) OR NOT (t."from" <@ p_reserving) OR t.day IS NOT NULL OR t.sats IS NOT NULL)
         UNION
         SELECT t.day FROM jsonb_to_recordset(p_items) AS t(day text, budgeted boolean) WHERE t.day IS NOT NULL AND t.budgeted)
       ORDER BY bu.day FOR UPDATE;
     -- The event locks of the players told, in player order.
     FOR k IN
       SELECT DISTINCT coalesce(x->>'user', (SELECT r.user_id FROM rewards r WHERE r.id = x->>'id')) AS u
       FROM jsonb_array_elements(p_items) x WHERE x->>'state' = ANY(p_told) ORDER BY 1
     LOOP
       IF p_wait THEN PERFORM pg_advisory_xact_lock(hashtextextended('e:' || k.u, 1));
       ELSIF NOT pg_try_advisory_xact_lock(hashtextextended('e:' || k.u, 1)) THEN v_busy := v_busy || k.u;
       END IF;
     END LOOP;
     RETURN QUERY
       WITH t AS (
         SELECT * FROM jsonb_to_recordset(p_items) AS t(i integer, op text, id text, "from" text[], unsent boolean, "user" text, key text, hash text, achievement text,
           occurred text, state text, reason text, payment text, gamertag text, settled bigint, owner text, lease bigint, at bigint, sats integer, day text, created bigint,
           address text, "setAddress" boolean, budgeted boolean, actor text, action text, kind text, terms jsonb)),
       old AS (
         SELECT r.id, r.state, r.budgeted, r.sats, r.day, r.terms, t.i FROM rewards r JOIN t ON t.id = r.id
         WHERE t.op = 'update' AND r.state = ANY(t."from") AND (NOT coalesce(t.unsent, false) OR r.phase = 'claimed') AND NOT (r.user_id = ANY(v_busy))
         ORDER BY r.id FOR UPDATE OF r),
       upd AS (
         UPDATE rewards r SET state = t.state, reason = t.reason, payment_id = coalesce(t.payment, r.payment_id), gamertag = coalesce(t.gamertag, r.gamertag),
           settled_at = t.settled, phase = CASE WHEN t.state = 'sending' THEN 'claimed' ELSE r.phase END, owner = t.owner, lease_until = t.lease,
           sats = coalesce(t.sats, r.sats), day = coalesce(t.day, r.day), created_at = coalesce(t.created, r.created_at),
           address = CASE WHEN coalesce(t."setAddress", false) THEN t.address ELSE r.address END, kind = coalesce(t.kind, r.kind), terms = coalesce(t.terms, r.terms),
           -- A guest's credit merged into the player who linked moves to that player.
           user_id = coalesce(t."user", r.user_id),
           -- A withdrawal is never in the budget: its sats were counted when they were credited.
           budgeted = CASE WHEN r.kind = 'withdrawal' THEN false ELSE coalesce(t.budgeted, CASE
             WHEN old.budgeted AND NOT (t.state = ANY(p_reserving)) THEN false
             WHEN NOT old.budgeted AND NOT (old.state = ANY(p_reserving)) AND t.state = ANY(p_reserving) AND EXISTS (SELECT 1 FROM budget bu WHERE bu.day = r.day) THEN true
             ELSE old.budgeted END) END
         FROM old JOIN t ON t.i = old.i WHERE r.id = old.id
         RETURNING r.*, old.state AS was, old.budgeted AS was_budgeted, old.sats AS was_sats, old.day AS was_day, old.terms AS was_terms, t.i, t.actor, t.action, t.at),
       ins AS (
         INSERT INTO rewards (id, user_id, idempotency_key, request_hash, achievement_id, sats, state, phase, reason, occurred_at, day, created_at, owner, lease_until, budgeted,
           address, gamertag, kind, terms)
         SELECT t.id, t."user", t.key, t.hash, t.achievement, t.sats, t.state, 'claimed', t.reason, t.occurred, t.day, t.created, t.owner, t.lease,
           t.budgeted AND coalesce(t.kind, 'payout') <> 'withdrawal', t.address, t.gamertag, coalesce(t.kind, 'payout'), t.terms
         FROM t WHERE t.op = 'insert' ORDER BY t."user", t.i
         RETURNING *),
       u AS (
         SELECT upd.id, upd.user_id, upd.idempotency_key, upd.achievement_id, upd.sats, upd.state, upd.reason, upd.payment_id, upd.created_at, upd.settled_at, upd.day,
           upd.budgeted,
           upd.kind, upd.terms, upd.was, upd.was_budgeted, upd.was_sats, upd.was_day, upd.was_terms, upd.i, upd.actor, upd.action, upd.at, row_to_json(upd) AS entry
         FROM upd
         UNION ALL
         SELECT ins.id, ins.user_id, ins.idempotency_key, ins.achievement_id, ins.sats, ins.state, ins.reason, ins.payment_id, ins.created_at, ins.settled_at, ins.day,
           ins.budgeted,
           ins.kind, ins.terms, NULL::text, false, 0, NULL::text, NULL::jsonb, t.i, NULL::text, NULL::text, t.at, row_to_json(ins)
         FROM ins JOIN t ON t.id = ins.id AND t.op = 'insert'),
       b AS (
         UPDATE budget bu SET sats = bu.sats + d.sats, usd_micros = bu.usd_micros + d.micros
         FROM (SELECT x.day, sum(x.s) AS sats, sum(x.m) AS micros FROM (
                 SELECT u.was_day AS day, -u.was_sats AS s, -rewardbus_usd_micros(u.was_terms) AS m FROM u WHERE u.was_budgeted
                 UNION ALL
                 SELECT u.day, u.sats, rewardbus_usd_micros(u.terms) FROM u WHERE u.budgeted) x
               GROUP BY x.day HAVING sum(x.s) <> 0 OR sum(x.m) <> 0) d
         WHERE bu.day = d.day),
       a AS (INSERT INTO audit (reward_id, actor, action, from_state, to_state, at) SELECT u.id, u.actor, u.action, u.was, u.state,
         u.at FROM u WHERE u.actor IS NOT NULL ORDER BY u.i),
       ev AS (
         INSERT INTO events (user_id, type, data, created_at)
         SELECT u.user_id, 'reward',
           rewardbus_reward_record(u.id, u.idempotency_key, u.achievement_id, u.user_id, u.sats, u.state, u.reason, u.payment_id, u.created_at, u.settled_at, u.kind, u.terms), u.at
         FROM u WHERE u.state = ANY(p_told) ORDER BY u.user_id, u.i
         RETURNING *, data->>'id' AS rid)
       -- Each change's event found by a join on its entry's id: a lookup per change read every
       -- event of the batch, which made a batch of 1,000 (a guest merged, a tournament) take seconds.
       SELECT u.i, false, u.entry, u.was,
         CASE WHEN ev.id IS NOT NULL THEN json_build_object('id', ev.id, 'user_id', ev.user_id, 'type', ev.type, 'data', ev.data, 'created_at', ev.created_at) END
       FROM u LEFT JOIN ev ON ev.rid = u.id
       UNION ALL
       SELECT t.i, true, NULL::json, NULL::text, NULL::json FROM t JOIN rewards r ON r.id = t.id WHERE t.op = 'update' AND r.user_id = ANY(v_busy);
   END $$;`,
  // Referrals (issue 37): each player's code; each userId's first link with the relay (only a
  // first link may be referred: filled from the players the ledger knows already, so enabling a
  // program later makes no old player "new"); the addresses (IPv6 by /64) players linked or claimed
  // from, for self-referrals; and each referral per program, pending, qualified or refused.
  `CREATE TABLE referral_codes (user_id text PRIMARY KEY, code text NOT NULL UNIQUE);
   CREATE TABLE first_links (user_id text PRIMARY KEY, at bigint NOT NULL);
   INSERT INTO first_links (user_id, at)
     SELECT user_id, min(at) FROM (
       SELECT user_id, created_at AS at FROM rewards
       UNION ALL SELECT user_id, (extract(epoch FROM day::date) * 1000)::bigint FROM address_links) x GROUP BY user_id;
   CREATE TABLE player_addresses (user_id text NOT NULL, address text NOT NULL, at bigint NOT NULL, PRIMARY KEY (user_id, address));
   CREATE TABLE referrals (
     program_id text NOT NULL, referee_id text NOT NULL, referrer_id text,
     state text NOT NULL CHECK (state IN ('pending', 'qualified', 'refused')), reason text,
     linked_at bigint NOT NULL, qualified_at bigint, qualified_day text,
     referrer_capped boolean NOT NULL DEFAULT false, rewarded boolean NOT NULL DEFAULT false,
     PRIMARY KEY (program_id, referee_id));
   CREATE INDEX referrals_pending ON referrals (referee_id) WHERE state = 'pending';
   CREATE INDEX referrals_qualified ON referrals (referrer_id, qualified_day) WHERE state = 'qualified';
   CREATE INDEX referrals_by_link ON referrals (linked_at);`,
  // Issue 39 (aim 3), a guest's 1,000 credits merged in ≤ 200 ms: rewardbus_apply reads its batch's
  // JSON once, into an array of rewardbus_change, where the days' budget rows, the event locks and
  // the writes each read it again; the array read back through rewardbus_changes, estimated as
  // jsonb_to_recordset was (100 rows): unnest's estimate of a variable's array (10) made the plan
  // kept after five calls join the batch's 1,000 rows in nested loops (seconds, not milliseconds).
  // Made from one template (apply-function.ts), so the next change adds an option, not a copy.
  `CREATE TYPE rewardbus_change AS (${CHANGE_COLUMNS});
   CREATE FUNCTION rewardbus_changes(p_items rewardbus_change[]) RETURNS SETOF rewardbus_change
   LANGUAGE plpgsql IMMUTABLE ROWS 100 AS $$
   BEGIN
     RETURN QUERY SELECT * FROM unnest(p_items);
   END $$;
   ${applyFunction()}`,
  // Issue 39 (aim 6), two relays not paying more per claim than one: what a group costs whatever
  // its size. The claim facts' statement parsed and planned for each group (2.4–3.2 ms of server
  // CPU for a statement that runs in 0.2–0.4), now written in the function and planned once per
  // session; rewardbus_apply's event locks' statement likewise (claim-facts-function.ts,
  // apply-function.ts). Self-contained: both functions made again whole.
  `${claimFactsFunction()}
   ${applyFunction({ genericPlans: true })}`,
  // Where players were seen is forgotten past the self-referral window (ReferralStore.forget).
  'CREATE INDEX player_addresses_by_at ON player_addresses (at)',
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
