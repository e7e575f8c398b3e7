import { CLAIM_GROUP_LOCKS } from '../claim-facts-function.js';

// Steps of MIGRATIONS (../migrations.ts), shipped, so their text never changes: writes grouped,
// a group's calls in one statement; and no JIT in the functions that read the ledger.

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
export const groupedWrites = `CREATE FUNCTION rewardbus_settle(p_id text, p_from text[], p_state text, p_reason text, p_payment text, p_gamertag text, p_settled bigint,
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
   END $$;`;

// No JIT in the functions that read the ledger. Once the rewards table is analyzed with a few
// thousand rows a player, a group's estimated cost passes jit_above_cost (it counts every
// subquery at 100 claims), and compiling the query took 30 ms of CPU for a statement that runs
// in 1: a claim group took 41 ms. Their statements are all short lookups, which JIT never pays
// back. A function made again later must say SET jit = off itself.
export const noJit = `ALTER FUNCTION rewardbus_append_event SET jit = off;
   ALTER FUNCTION rewardbus_claim_facts SET jit = off;
   ALTER FUNCTION rewardbus_claim_insert SET jit = off;
   ALTER FUNCTION rewardbus_settle SET jit = off;
   ALTER FUNCTION rewardbus_settle_many SET jit = off;
   ALTER FUNCTION rewardbus_claim_facts_many SET jit = off;
   ALTER FUNCTION rewardbus_claim_insert_many SET jit = off;`;
