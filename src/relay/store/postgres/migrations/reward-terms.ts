// A step of MIGRATIONS (../migrations.ts), shipped, so its text never changes.

// What a reward's amount was decided by, beyond its achievement (issues 37 and 38): the price
// used (usd, btcUsd), a streak's day, a tournament's period and place, a referral's side. One
// column of terms the record carries as they are, so a new program adds no column and no
// function; rewardbus_apply writes them and rewardbus_reward_record spreads them on the record.
export const rewardTerms = `ALTER TABLE rewards ADD COLUMN terms jsonb;
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
   END $$;`;
