import { RESERVING_LIST, RESERVING_QUOTED, STATE_LIST } from '../../state-lists.js';
import { CLAIM_GROUP_LOCKS } from '../claim-facts-function.js';

// A step of MIGRATIONS (../migrations.ts), shipped, so its text never changes.

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
export const balanceMode = `ALTER TABLE rewards ADD COLUMN kind text NOT NULL DEFAULT 'payout';
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
   END $$;`;
