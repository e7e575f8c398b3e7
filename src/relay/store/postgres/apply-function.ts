/**
 * The text of rewardbus_apply, the PostgreSQL ledger's one write primitive (store/postgres/apply.ts
 * calls it), built in one place. Migrations 15 and 16 each carry a whole copy as literal text; from
 * migration 19 on a step that makes the function again calls `applyFunction` here, so a change is
 * one option more, not ninety lines copied again.
 *
 * A shipped step's text never changes (migrations.test.ts pins each step's hash): the next change
 * adds an option (its default: the function as it is here) and the step that ships it passes it.
 */

/** The columns of one change as the relay sends it (apply.ts's `Change`), in the order of the type rewardbus_change. */
export const CHANGE_COLUMNS = `i integer, op text, id text, "from" text[], unsent boolean, "user" text, key text, hash text, achievement text,
     occurred text, state text, reason text, payment text, gamertag text, settled bigint, owner text, lease bigint, at bigint, sats integer, day text, created bigint,
     address text, "setAddress" boolean, budgeted boolean, actor text, action text, kind text, terms jsonb`;

/** What a later step changes in rewardbus_apply; each option's default is the function as migration 19 made it. */
export interface ApplyOptions {
  /**
   * Migration 20 (issue 39): every statement's plan made once per session. The event locks'
   * statement was planned afresh on each call (0.17 ms of a batch of one's 1.3); the others
   * already kept theirs.
   */
  genericPlans?: boolean;
}

/**
 * rewardbus_apply as migration 19 made it (issue 39): the batch's JSON read once, into an array of
 * rewardbus_change, where three statements each read it again; the writes read the array through
 * rewardbus_changes (estimated at 100 rows, as jsonb_to_recordset was, so the plan kept for the
 * session stays the one made for a batch); the busy answers looked for only when a player was busy.
 * Otherwise as migration 16 made it: the same locks in the same order, the same writes.
 */
export function applyFunction({ genericPlans = false }: ApplyOptions = {}): string {
  return `CREATE OR REPLACE FUNCTION rewardbus_apply(p_items jsonb, p_reserving text[], p_told text[], p_wait boolean)
   RETURNS TABLE (i integer, busy boolean, entry json, old_state text, event json)
   LANGUAGE plpgsql SET enable_seqscan = off SET jit = off SET lock_timeout = '5s'${genericPlans ? ' SET plan_cache_mode = force_generic_plan' : ''} AS $$
   #variable_conflict use_column
   DECLARE
     v_busy text[] := '{}';
     v_items rewardbus_change[];
     k record;
   BEGIN
     -- The batch read once; each statement below reads the array.
     v_items := ARRAY(SELECT x FROM jsonb_populate_recordset(NULL::rewardbus_change, p_items) x);
     -- The budget rows of the days a change can move: out of the reserving states or into them, to
     -- another day or price, and the days new entries count on.
     PERFORM 1 FROM budget bu WHERE bu.day IN (
         SELECT r.day FROM rewards r JOIN unnest(v_items) t ON t.id = r.id
         WHERE t.op = 'update'
           AND (NOT (t.state = ANY(p_reserving)) OR NOT (t."from" <@ p_reserving) OR t.day IS NOT NULL OR t.sats IS NOT NULL)
         UNION
         SELECT t.day FROM unnest(v_items) t WHERE t.day IS NOT NULL AND t.budgeted)
       ORDER BY bu.day FOR UPDATE;
     -- The event locks of the players told, in player order.
     FOR k IN
       SELECT DISTINCT coalesce(t."user", (SELECT r.user_id FROM rewards r WHERE r.id = t.id)) AS u
       FROM unnest(v_items) t WHERE t.state = ANY(p_told) ORDER BY 1
     LOOP
       IF p_wait THEN PERFORM pg_advisory_xact_lock(hashtextextended('e:' || k.u, 1));
       ELSIF NOT pg_try_advisory_xact_lock(hashtextextended('e:' || k.u, 1)) THEN v_busy := v_busy || k.u;
       END IF;
     END LOOP;
     RETURN QUERY
       WITH t AS (SELECT * FROM rewardbus_changes(v_items)),
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
       SELECT u.i, false, u.entry, u.was,
         CASE WHEN ev.id IS NOT NULL THEN json_build_object('id', ev.id, 'user_id', ev.user_id, 'type', ev.type, 'data', ev.data, 'created_at', ev.created_at) END
       FROM u LEFT JOIN ev ON ev.rid = u.id
       UNION ALL
       -- A busy player's changes, answered busy (read only when a player was).
       SELECT t.i, true, NULL::json, NULL::text, NULL::json FROM t JOIN rewards r ON r.id = t.id
       WHERE cardinality(v_busy) > 0 AND t.op = 'update' AND r.user_id = ANY(v_busy);
   END $$;`;
}
