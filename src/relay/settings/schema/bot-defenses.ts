import { secondsAsMs, strongSecrets } from '../readers.js';
import { count, type Setting, secretsToRotate } from './setting.js';

/** Defenses against bots: per-address caps, holds, denials, unlock proofs, rate limits, slow bodies, streams. */
export const BOT_DEFENSE_SETTINGS = {
  RELAY_ADDRESS_DAILY_CAP_SATS: {
    ...count('sats per client address (IPv6 by /64) per UTC day, every player together; 0: no cap'),
    default: '0',
    defaultMeans: 'off',
    field: 'addressDailyCapSats',
    option: true,
    group: 'limits',
    docs: 'sats per client address (IPv6 by /64) per UTC day, every player together; refusals say `address_daily_cap`',
    help: 'per client address per UTC day, every player together; 0: none',
  },
  RELAY_LINKS_PER_ADDRESS_PER_DAY: {
    ...count('different players one client address may link per UTC day; 0: no cap'),
    default: '0',
    defaultMeans: 'off',
    field: 'linksPerAddressPerDay',
    option: true,
    group: 'limits',
    docs: 'different gamertags one address may link per UTC day; past it, `429 too_many_players` until the next UTC day',
    help: 'different players one address may link per UTC day; 0: no cap',
  },
  RELAY_HOLD_ABOVE_SATS: {
    ...count("sats above which a claim waits for an operator's approval; 0: none"),
    default: '0',
    defaultMeans: 'off',
    field: 'holdAboveSats',
    option: true,
    group: 'limits',
    docs: 'a claim worth more waits for an operator (status `held`). Catalog entries can also say `"hold": true`',
    help: "claims worth more wait for an operator's approval; 0: none",
  },
  RELAY_DENIAL_COOLDOWN_HOURS: {
    ...count("hours an operator's denial refuses the same player's claims of the same achievement; 0: off"),
    default: '24',
    field: 'denialCooldownHours',
    option: true,
    group: 'limits',
    docs:
      "after an operator denies a held claim, the same player's claims of the same achievement are refused for this many hours " +
      '(`denied_recently`: nothing held, nothing sent); `0`: off',
    help: "after a denial, that player's claims of that achievement are refused; 0: off",
  },
  RELAY_GAME_SERVER_SECRET: {
    read: strongSecrets,
    accepts: `${secretsToRotate}, shared with the game's server; to rotate, several such, separated by commas (the first is current, all verify)`,
    secret: true,
    field: 'gameServerSecret',
    option: true,
    group: 'limits',
    docs:
      'shared with the game\'s server: checks the unlock proofs of achievements with `"proof": "server"` ([unlock-proofs.md](unlock-proofs.md)), ' +
      'and is the bearer token its tournament results and withdrawal-allowance raises are posted with ([relay-api.md](relay-api.md#tournaments)). ' +
      'A catalog with server proofs or tournaments needs it: without it the relay does not start. At least 32 characters; `NEW,OLD` to rotate',
    help: "checks unlock proofs signed by the game's server (32+ characters); NEW,OLD to rotate",
  },
  RELAY_RATE_LIMIT_PER_MINUTE: {
    ...count('requests; 0: off'),
    default: '60',
    field: 'rateLimitPerMinute',
    option: true,
    group: 'limits',
    docs: 'requests per minute per address and per player; `0`: off. Each relay counts on its own',
    help: 'per address and per player; 0: off',
  },
  RELAY_BODY_TIMEOUT_SECONDS: {
    read: secondsAsMs(1),
    accepts: 'a whole number from 1 (seconds a request body may take to arrive, 1 or more)',
    default: '10',
    field: 'bodyTimeoutMs',
    option: true,
    group: 'limits',
    docs: 'a request body must arrive within this; a slower one is answered 408 and its socket closed',
    help: 'a request body must arrive within this, in seconds',
  },
  RELAY_STREAMS_PER_PLAYER: {
    ...count('open event streams per player; 0: no cap'),
    default: '5',
    field: 'streamsPerPlayer',
    group: 'limits',
    docs: 'open event streams per player (429 past it); `0`: no cap',
    help: 'open event streams per player; 0: no cap',
  },
  RELAY_STREAMS_PER_ADDRESS: {
    ...count('open event streams per client address; 0: no cap'),
    default: '20',
    field: 'streamsPerAddress',
    group: 'limits',
    docs: 'open event streams per client address (429 past it); `0`: no cap',
    help: 'open event streams per client address; 0: no cap',
  },
} as const satisfies Record<string, Setting>;
