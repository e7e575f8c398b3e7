// A step of MIGRATIONS (../migrations.ts), shipped, so its text never changes.

// Tournaments (issue 37, its own step): each period's results posted once (their ranking's hash,
// when, by whom); the players who linked with this relay, whom a ranking may name (by userId, or
// by the gamertag they last linked with); and the players' locks taken in one call, in a stable
// order (a ranking of a thousand places is one round trip, and two posts never deadlock).
export const tournaments = `CREATE TABLE tournament_results (
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
   END $$;`;
