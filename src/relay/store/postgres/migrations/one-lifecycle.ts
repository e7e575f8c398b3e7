import { STATE_LIST } from '../../state-lists.js';

// A step of MIGRATIONS (../migrations.ts), shipped, so its text never changes.

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
export const oneLifecycle = `ALTER TABLE rewards ADD CONSTRAINT rewards_state CHECK (state IN (${STATE_LIST}));
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
   END $$;`;
