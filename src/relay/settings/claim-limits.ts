import type { ClaimLimits } from '../core/ports/ledger.js';
import { DEFAULTS } from './schema.js';

/** The settings a claim's limits are made of, under their RelayOptions (and RelayConfig) names; absent: the default. */
export interface LimitSettings {
  userDailyCapSats?: number | undefined;
  dailyBudgetSats?: number | undefined;
  userDailyCapUsd?: number | undefined;
  dailyBudgetUsd?: number | undefined;
  addressDailyCapSats?: number | undefined;
  denialCooldownHours?: number | undefined;
}

/**
 * The limits every claim, approval and tournament post is held to, made once from the settings:
 * the relay (createRelay's options) and the CLI's commands (loadConfig's config) both ask here, so
 * a decision taken from a terminal meets the same budget, in sats or in dollars, as the relay's.
 * A budget or cap in dollars turns its sats default off; both set for one is an error.
 */
export function claimLimits(s: LimitSettings): ClaimLimits {
  const dailyBudgetUsd = s.dailyBudgetUsd ?? 0;
  const userDailyCapUsd = s.userDailyCapUsd ?? 0;
  if (dailyBudgetUsd > 0 && (s.dailyBudgetSats ?? 0) > 0) throw new Error('dailyBudgetUsd and dailyBudgetSats are both set: set one or the other');
  if (userDailyCapUsd > 0 && (s.userDailyCapSats ?? 0) > 0) throw new Error('userDailyCapUsd and userDailyCapSats are both set: set one or the other');
  return {
    userDailyCapSats: s.userDailyCapSats ?? (userDailyCapUsd > 0 ? 0 : DEFAULTS.userDailyCapSats),
    dailyBudgetSats: s.dailyBudgetSats ?? (dailyBudgetUsd > 0 ? 0 : DEFAULTS.dailyBudgetSats),
    ...(dailyBudgetUsd > 0 ? { dailyBudgetUsd } : {}),
    ...(userDailyCapUsd > 0 ? { userDailyCapUsd } : {}),
    addressDailyCapSats: s.addressDailyCapSats ?? DEFAULTS.addressDailyCapSats,
    denialCooldownHours: s.denialCooldownHours ?? DEFAULTS.denialCooldownHours,
  };
}
