// Steps of MIGRATIONS (../migrations.ts), shipped, so their text never changes: a payout's and
// a claim's statements as functions, each phase one round trip.

// A payout's phases each in one round trip: the player's reward event built and appended in
// the statement that changes the entry. rewardbus_reward_record is toRewardRecord
// (core/reward-record.ts) in SQL; the ledger contract checks the two agree.
export const payoutRoundTrips = `CREATE FUNCTION rewardbus_iso(ms bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
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
   END $$;`;

// A claim's two round trips as two calls: PL/pgSQL keeps each statement's plan for the session,
// where the same statements sent as text were parsed and planned on every claim (half the
// server's CPU per payout). The first takes the locks and reads the facts, each statement under
// the locks taken before it; the second writes a new entry, its budget share and its event.
export const claimRoundTrips = `CREATE FUNCTION rewardbus_claim_facts(p_user text, p_key text, p_day text, p_achievement text, p_nonce text, p_id text, p_at bigint,
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
   END $$;`;

// The reward record in PL/pgSQL: as SQL functions they could not be inlined (to_char is only
// stable), so each call set up an executor of its own, twice per event. Same bodies.
export const rewardRecordInPlpgsql = `CREATE OR REPLACE FUNCTION rewardbus_iso(ms bigint) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
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
   END $$;`;
