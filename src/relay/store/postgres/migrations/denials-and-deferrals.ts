import { RESERVING_LIST, RESERVING_QUOTED } from '../../state-lists.js';
import { CLAIM_GROUP_LOCKS } from '../claim-facts-function.js';

// A step of MIGRATIONS (../migrations.ts), shipped, so its text never changes.

// Denials and deferrals (issue 34): a claim's facts also say when an operator last denied the
// player this achievement (the denial's audit time; the refusal is decided in claim-decision.ts),
// read by a partial index of denied entries, which are few. The two facts functions are made
// again with that column, and the reserving states written from the lifecycle's table
// (core/lifecycle.ts), not by hand. Deferred entries are pruned by age.
export const denialsAndDeferrals = `DROP FUNCTION rewardbus_claim_facts(text, text, text, text, text, text, bigint, boolean, boolean, text, text);
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
`;
