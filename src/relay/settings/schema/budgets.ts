import { dollars } from '../readers.js';
import { count, type Setting } from './setting.js';

/** The daily budget and each player's daily cap, in sats or in dollars. */
export const BUDGET_SETTINGS = {
  RELAY_USER_DAILY_CAP_SATS: {
    ...count('sats; 0: no cap'),
    default: '1000',
    field: 'userDailyCapSats',
    option: true,
    group: 'limits',
    docs: 'sats per player (userId) per UTC day; `0`: no cap',
    help: 'per player per UTC day; 0: none',
  },
  RELAY_DAILY_BUDGET_SATS: {
    ...count('sats; 0: no budget'),
    default: '100000',
    field: 'dailyBudgetSats',
    option: true,
    group: 'limits',
    docs: 'sats for the whole project per UTC day; `0`: no budget',
    help: 'the whole game per UTC day; 0: none',
  },
  // Issue 38: the dollar alternatives to the two above (one or the other for each: both is a start error).
  RELAY_USER_DAILY_CAP_USD: {
    read: dollars,
    accepts: 'dollars, e.g. 0.50 (at most 6 decimals; 0: no cap)',
    defaultText: 'none (`RELAY_USER_DAILY_CAP_SATS` caps)',
    field: 'userDailyCapUsd',
    option: true,
    group: 'limits',
    docs: 'dollars per player (userId) per UTC day, in place of `RELAY_USER_DAILY_CAP_SATS` (set one or the other): each claim counts its dollar value at the price it was decided at; `0`: no cap',
    help: 'per player per UTC day in dollars, in place of the sats cap',
  },
  RELAY_DAILY_BUDGET_USD: {
    read: dollars,
    accepts: 'dollars, e.g. 25 (at most 6 decimals; 0: no budget)',
    defaultText: 'none (`RELAY_DAILY_BUDGET_SATS` budgets)',
    field: 'dailyBudgetUsd',
    option: true,
    group: 'limits',
    docs: 'dollars for the whole project per UTC day, in place of `RELAY_DAILY_BUDGET_SATS` (set one or the other): each claim counts its dollar value (its `usd`, or its sats at the price it was decided at), so it buys as many $0.05 rewards at any price; `0`: no budget',
    help: 'the whole game per UTC day in dollars, in place of the sats budget',
  },
} as const satisfies Record<string, Setting>;
