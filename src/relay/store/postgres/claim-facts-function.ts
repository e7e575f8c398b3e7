import { RESERVING_STATES } from '../../core/lifecycle.js';

/** The states that reserve sats, as an SQL list. */
const RESERVING_LIST = RESERVING_STATES.map((s) => `'${s}'`).join(', ');

/**
 * rewardbus_claim_facts_many's start, the same in every step that made it (12 on): the group's
 * players' and addresses' locks taken without waiting (a busy one is answered busy), its days'
 * budget rows locked in order, and a proof's nonce refused in a group.
 */
export const CLAIM_GROUP_LOCKS = `   DECLARE
     v_busy text[] := '{}';
     k record;
   BEGIN
     -- A player's (or address's) lock another transaction holds is not waited for: that claim is
     -- answered busy and made alone, so one claim in another relay's group never holds up a group.
     FOR k IN SELECT DISTINCT x->>'user' AS u FROM jsonb_array_elements(p_items) x ORDER BY 1 LOOP
       IF NOT pg_try_advisory_xact_lock(hashtextextended('u:' || k.u, 0)) THEN v_busy := v_busy || ('u:' || k.u); END IF;
     END LOOP;
     FOR k IN SELECT DISTINCT x->>'lockAddress' AS a FROM jsonb_array_elements(p_items) x WHERE x->>'lockAddress' IS NOT NULL ORDER BY 1 LOOP
       IF NOT pg_try_advisory_xact_lock(hashtextextended('a:' || k.a, 0)) THEN v_busy := v_busy || ('a:' || k.a); END IF;
     END LOOP;
     -- The budget rows of the group's days, in day order (a group can span midnight).
     FOR k IN SELECT DISTINCT x->>'day' AS d FROM jsonb_array_elements(p_items) x WHERE (x->>'budgeted')::boolean ORDER BY 1 LOOP
       INSERT INTO budget AS bu (day, sats) VALUES (k.d, 0) ON CONFLICT (day) DO UPDATE SET sats = bu.sats;
     END LOOP;
     -- The facts of the group's claims in one statement, each read as rewardbus_claim_facts reads
     -- it alone (a group holds one claim of a player, and none that spends a proof's nonce).
     IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_items) x WHERE x->>'nonce' IS NOT NULL) THEN
       RAISE EXCEPTION 'a claim that spends a proof''s nonce goes alone';
     END IF;
`;

/**
 * rewardbus_claim_facts_many as migration 20 makes it (issue 39): issue 38's step made it, whole (the same
 * locks, in the same order, the same facts), its facts statement written in the function, not
 * EXECUTEd. Planned for each group, it cost the server 2.4–3.2 ms to parse and plan a statement
 * that runs in 0.2–0.4: most of a claim group's CPU, paid once per group however few claims it
 * holds, so two relays, whose groups are half as large, paid it twice per claim. Its plan is now
 * made once per session (plan_cache_mode = force_generic_plan), without sequential scans (a
 * plan made while the table was small must not scan it all once it has grown): the batch is read
 * by jsonb_to_recordset, estimated at 100 rows whatever the group, and every lookup by an index.
 */
export function claimFactsFunction(): string {
  return `CREATE OR REPLACE FUNCTION rewardbus_claim_facts_many(p_items jsonb)
   RETURNS TABLE (i integer, busy boolean, existing json, user_sats bigint, address_sats bigint, project_sats bigint, last_at bigint, nonce_fresh boolean, last_denied_at bigint,
       user_usd_micros bigint, project_usd_micros bigint)
   LANGUAGE plpgsql SET jit = off SET lock_timeout = '5s' SET enable_seqscan = off SET plan_cache_mode = force_generic_plan AS $$
   #variable_conflict use_column
${CLAIM_GROUP_LOCKS}     RETURN QUERY
       WITH t AS (
         SELECT t.*, ('u:' || t."user") = ANY(v_busy) OR coalesce(('a:' || t."lockAddress") = ANY(v_busy), false) AS busy
         FROM jsonb_to_recordset(p_items) AS t(i integer, "user" text, key text, day text, achievement text, id text, at bigint,
           budgeted boolean, "userCap" boolean, address text, "lockAddress" text))
       SELECT t.i, true, NULL::json, 0::bigint, 0::bigint, NULL::bigint, NULL::bigint, false, NULL::bigint, 0::bigint, NULL::bigint FROM t WHERE t.busy
       UNION ALL
       SELECT t.i, false,
         (SELECT row_to_json(r) FROM rewards r WHERE r.user_id = t."user" AND r.idempotency_key = t.key),
         CASE WHEN t."userCap" THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.user_id = t."user" AND r.day = t.day AND r.state IN (${RESERVING_LIST}) AND r.kind <> 'withdrawal') ELSE 0 END::bigint,
         CASE WHEN t.address IS NOT NULL THEN (SELECT coalesce(sum(r.sats), 0) FROM rewards r WHERE r.address = t.address AND r.day = t.day AND r.state IN (${RESERVING_LIST}) AND r.kind <> 'withdrawal') ELSE 0 END::bigint,
         CASE WHEN t.budgeted THEN (SELECT bu.sats FROM budget bu WHERE bu.day = t.day) END,
         (SELECT r.created_at FROM rewards r WHERE r.user_id = t."user" AND r.achievement_id = t.achievement AND (r.state IN (${RESERVING_LIST})) IS TRUE AND r.kind <> 'withdrawal' ORDER BY r.created_at DESC LIMIT 1),
         false,
         (SELECT max(a.at) FROM rewards r JOIN audit a ON a.reward_id = r.id WHERE r.user_id = t."user" AND r.achievement_id = t.achievement AND r.state = 'rejected'
            AND r.reason = 'denied_by_operator' AND a.to_state = 'rejected'),
         CASE WHEN t."userCap" THEN (SELECT coalesce(sum(rewardbus_usd_micros(r.terms)), 0) FROM rewards r
           WHERE r.user_id = t."user" AND r.day = t.day AND r.state IN (${RESERVING_LIST}) AND r.kind <> 'withdrawal') ELSE 0 END::bigint,
         CASE WHEN t.budgeted THEN (SELECT bu.usd_micros FROM budget bu WHERE bu.day = t.day) END
       FROM t WHERE NOT t.busy;
   END $$;`;
}
