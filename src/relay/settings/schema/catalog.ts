import { strongSecrets, text } from '../readers.js';
import { type Setting, secretsToRotate } from './setting.js';

/** The achievements, and the secret player tokens are signed with. */
export const CATALOG_SETTINGS = {
  RELAY_CATALOG: {
    read: text,
    accepts: 'the path of a JSON file of achievements',
    defaultText: 'the built-in demo catalog',
    field: 'catalogFile',
    group: 'catalog',
    docs:
      'a JSON file of achievements: a list, or `{ "achievements": [...] }`. Each entry: `id`, `title`, `sats`, `repeat` ' +
      '(`{ "kind": "once" }`, `{ "kind": "daily" }`, `{ "kind": "cooldown", "seconds": N }` or `{ "kind": "streak", "sats": [10, 20, 30] }`, ' +
      'a login streak, written without `sats`), and optionally `minPlaySeconds`, ' +
      '`"proof": "server"`, `"hold": true`; `"usd": 0.05` in place of `sats` (README, Prices in dollars); `"payout": "balance"` or `"instant"` ' +
      'to credit it or pay it at once whatever `RELAY_PAYOUT_MODE` says (docs/balance.md). Other kinds of entry: `"kind": "tournament"` and `"kind": "referral"` ' +
      '(README, Tournaments and Referrals). An error names the entry and the field: `achievements[1] (id "coin-streak"): sats must be at least 1`',
    help: 'a JSON file of achievements (default: the demo catalog)',
  },
  RELAY_SECRET: {
    read: strongSecrets,
    accepts: `${secretsToRotate}; to rotate, several such, separated by commas (the first signs, all verify)`,
    secret: true,
    defaultText: 'generated once and kept in `RELAY_DATA_DIR`',
    group: 'catalog',
    docs:
      "signs player tokens (and the event stream's 60 s tickets); at least 32 characters. `NEW,OLD`: the first signs, every one listed verifies. " +
      'Required with `RELAY_DATABASE_URL`',
    help: 'signs player tokens, 32+ characters (generated); to rotate see docs/deploy.md §7',
  },
} as const satisfies Record<string, Setting>;
