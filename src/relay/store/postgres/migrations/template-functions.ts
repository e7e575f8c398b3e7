import { applyFunction, CHANGE_COLUMNS } from '../apply-function.js';
import { claimFactsFunction } from '../claim-facts-function.js';

// Steps of MIGRATIONS (../migrations.ts), shipped, so their text never changes: issue 39,
// rewardbus_apply and the claim facts made from their templates, planned once per session.

// Issue 39 (aim 3), a guest's 1,000 credits merged in ≤ 200 ms: rewardbus_apply reads its batch's
// JSON once, into an array of rewardbus_change, where the days' budget rows, the event locks and
// the writes each read it again; the array read back through rewardbus_changes, estimated as
// jsonb_to_recordset was (100 rows): unnest's estimate of a variable's array (10) made the plan
// kept after five calls join the batch's 1,000 rows in nested loops (seconds, not milliseconds).
// Made from one template (apply-function.ts), so the next change adds an option, not a copy.
export const applyFromTemplate = `CREATE TYPE rewardbus_change AS (${CHANGE_COLUMNS});
   CREATE FUNCTION rewardbus_changes(p_items rewardbus_change[]) RETURNS SETOF rewardbus_change
   LANGUAGE plpgsql IMMUTABLE ROWS 100 AS $$
   BEGIN
     RETURN QUERY SELECT * FROM unnest(p_items);
   END $$;
   ${applyFunction()}`;

// Issue 39 (aim 6), two relays not paying more per claim than one: what a group costs whatever
// its size. The claim facts' statement parsed and planned for each group (2.4–3.2 ms of server
// CPU for a statement that runs in 0.2–0.4), now written in the function and planned once per
// session; rewardbus_apply's event locks' statement likewise (claim-facts-function.ts,
// apply-function.ts). Self-contained: both functions made again whole.
export const plannedOncePerSession = `${claimFactsFunction()}
   ${applyFunction({ genericPlans: true })}`;
