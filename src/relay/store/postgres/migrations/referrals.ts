// Steps of MIGRATIONS (../migrations.ts), shipped, so their text never changes: referrals
// (issue 37), and where players were seen forgotten past the self-referral window.

// Referrals (issue 37): each player's code; each userId's first link with the relay (only a
// first link may be referred: filled from the players the ledger knows already, so enabling a
// program later makes no old player "new"); the addresses (IPv6 by /64) players linked or claimed
// from, for self-referrals; and each referral per program, pending, qualified or refused.
export const referrals = `CREATE TABLE referral_codes (user_id text PRIMARY KEY, code text NOT NULL UNIQUE);
   CREATE TABLE first_links (user_id text PRIMARY KEY, at bigint NOT NULL);
   INSERT INTO first_links (user_id, at)
     SELECT user_id, min(at) FROM (
       SELECT user_id, created_at AS at FROM rewards
       UNION ALL SELECT user_id, (extract(epoch FROM day::date) * 1000)::bigint FROM address_links) x GROUP BY user_id;
   CREATE TABLE player_addresses (user_id text NOT NULL, address text NOT NULL, at bigint NOT NULL, PRIMARY KEY (user_id, address));
   CREATE TABLE referrals (
     program_id text NOT NULL, referee_id text NOT NULL, referrer_id text,
     state text NOT NULL CHECK (state IN ('pending', 'qualified', 'refused')), reason text,
     linked_at bigint NOT NULL, qualified_at bigint, qualified_day text,
     referrer_capped boolean NOT NULL DEFAULT false, rewarded boolean NOT NULL DEFAULT false,
     PRIMARY KEY (program_id, referee_id));
   CREATE INDEX referrals_pending ON referrals (referee_id) WHERE state = 'pending';
   CREATE INDEX referrals_qualified ON referrals (referrer_id, qualified_day) WHERE state = 'qualified';
   CREATE INDEX referrals_by_link ON referrals (linked_at);`;

// Where players were seen is forgotten past the self-referral window (ReferralStore.forget).
export const forgetPlayerAddresses = 'CREATE INDEX player_addresses_by_at ON player_addresses (at)';
