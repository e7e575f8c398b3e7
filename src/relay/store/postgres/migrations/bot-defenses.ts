// Steps of MIGRATIONS (../migrations.ts), shipped, so their text never changes: the defenses
// against bots (client addresses, held entries, proof nonces, links per address), and their pruning.

// Defenses against bots: the client address on each entry (the per-address cap sums its
// reserving rows), held entries reserve (the partial indexes name the states again), spent
// proof nonces, and the players each address linked per day.
export const botDefenses = `ALTER TABLE rewards ADD COLUMN address text;
   DROP INDEX rewards_by_user_day;
   CREATE INDEX rewards_by_user_day ON rewards (user_id, day) WHERE state IN ('sending', 'paid', 'needs_review', 'held');
   DROP INDEX rewards_by_state;
   CREATE INDEX rewards_by_state ON rewards (state) WHERE state IN ('sending', 'needs_review', 'held');
   CREATE INDEX rewards_by_address_day ON rewards (address, day) WHERE address IS NOT NULL AND state IN ('sending', 'paid', 'needs_review', 'held');
   CREATE TABLE proof_nonces (nonce text PRIMARY KEY, reward_id text NOT NULL, at bigint NOT NULL);
   CREATE TABLE address_links (address text NOT NULL, day text NOT NULL, user_id text NOT NULL, PRIMARY KEY (address, day, user_id));`;

// Pruning reads old links and nonces by these (several relays prune, one at a time).
export const pruningIndexes = `CREATE INDEX address_links_by_day ON address_links (day);
   CREATE INDEX proof_nonces_by_at ON proof_nonces (at);`;
