import { oneOf } from '../readers.js';
import { count, type Setting } from './setting.js';

/** Balance mode: claims credited to a balance the player withdraws from, and the limits on withdrawals. */
export const BALANCE_SETTINGS = {
  RELAY_PAYOUT_MODE: {
    read: oneOf(['instant', 'balance'] as const),
    accepts: "instant (each claim paid at once) or balance (credited to the player's balance, withdrawn later)",
    default: 'instant',
    field: 'payoutMode',
    option: true,
    group: 'balance',
    docs:
      "`instant`: each claim is paid at once. `balance`: credited to the player's balance (`GET /v1/balance`)," +
      ' withdrawn with `POST /v1/withdrawals`; an achievement\'s own `"payout"` wins',
    help: 'instant, or balance: claims credited to a balance the player withdraws from',
  },
  RELAY_MIN_WITHDRAWAL_SATS: {
    ...count('the smallest withdrawal from a balance', 1),
    default: '100',
    field: 'minWithdrawalSats',
    option: true,
    group: 'balance',
    docs: 'the smallest withdrawal (`422 below_minimum` under it)',
    help: 'the smallest withdrawal from a balance',
  },
  RELAY_WITHDRAWAL_DAILY_LIMIT_SATS: {
    ...count('sats a player may withdraw per UTC day; 0: no daily limit'),
    default: '0',
    defaultMeans: 'off',
    field: 'withdrawalDailyLimitSats',
    option: true,
    group: 'balance',
    docs: "what a player may withdraw per UTC day: the Earn SDK's most important fraud control, best set from day one; at least `RELAY_MIN_WITHDRAWAL_SATS`",
    help: 'sats a player may withdraw per UTC day; 0: no limit',
  },
  RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS: {
    ...count("sats a player's withdrawal allowance grows per minute of witnessed play; 0: no allowance"),
    default: '0',
    defaultMeans: 'off',
    field: 'withdrawalAllowancePerPlayMinuteSats',
    option: true,
    group: 'balance',
    docs: "the withdrawal allowance grows by this per minute of witnessed play (heartbeats `POST /v1/play`) and by the game server's raises",
    help: 'sats the withdrawal allowance grows per minute of play; 0: no allowance',
  },
  RELAY_WITHDRAWAL_ALLOWANCE_START_SATS: {
    ...count("a player's withdrawal allowance before any play"),
    default: '0',
    field: 'withdrawalAllowanceStartSats',
    option: true,
    group: 'balance',
    docs: 'the allowance before any play; only with `RELAY_WITHDRAWAL_ALLOWANCE_PER_PLAY_MINUTE_SATS` (alone it is a start error: there is no allowance without it)',
    help: 'the withdrawal allowance before any play',
  },
} as const satisfies Record<string, Setting>;
