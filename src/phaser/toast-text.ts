import type { FinalEvent, RewardOutcome } from '../client/events.js';

/** The relay's reason codes, as a player reads them. */
const REASONS: Record<string, string> = {
  already_claimed: 'already earned',
  already_claimed_today: 'already earned today',
  cooldown: 'too soon',
  user_daily_cap: 'daily limit reached',
  daily_budget: 'rewards paused for today',
  insufficient_balance: 'the game is out of sats',
  unknown_gamertag: 'unknown gamertag',
  denied_by_operator: 'not approved',
  denied_recently: 'not approved recently',
};

/**
 * What an outcome's toast says: "+21 sats · First coin → alice". A reward said earlier as being
 * checked and settled since says it is that one: "+21 sats · First coin — paid after review".
 * `title` is the achievement's title from the catalog. No Phaser here: unit-tested in Node.
 */
export function toastText(event: FinalEvent, o: RewardOutcome, title: string): string {
  const why = REASONS[o.reason ?? ''] ?? o.reason ?? 'refused';
  const after = o.afterHold ? 'approval' : 'review';
  if (event === 'reward:paid') return `+${o.sats} sats · ${title} ${o.afterReview ? `— paid after ${after}` : `→ ${o.gamertag}`}`;
  if (event === 'reward:rejected') return `No sats for ${title}: ${why}`;
  if (event === 'reward:failed') return `Payout failed for ${title}${o.afterReview ? ` after ${after}` : ''}: ${why}`;
  if (event === 'reward:held') return `${o.sats} sats for ${title} are waiting for approval`;
  return `${o.sats} sats for ${title} are being checked`;
}

/**
 * What a claim sent before the player's play time says (`reward:waiting`), on one line:
 * "Level complete: 20 s of play needed" (`minPlaySeconds` from the catalog), else "Level
 * complete: paid in 12 s".
 */
export function waitingText(title: string, retryAt: number, now: number, minPlaySeconds?: number): string {
  return minPlaySeconds ? `${title}: ${minPlaySeconds} s of play needed` : `${title}: paid in ${Math.max(1, Math.ceil((retryAt - now) / 1000))} s`;
}
