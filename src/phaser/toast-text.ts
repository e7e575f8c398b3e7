import type { FinalEvent, RewardOutcome, WithdrawalOutcome } from '../client/events.js';

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
 * What an outcome's toast says: "+21 sats · First coin → alice"; a login streak's, "Day 3 streak · +30 sats"; credited to a balance (balance
 * mode), "+21 sats · First coin · balance 52" (`balance`: the balance after it, when known). A reward said earlier as being
 * checked and settled since says it is that one: "+21 sats · First coin — paid after review".
 * `title` is the achievement's title from the catalog. No Phaser here: unit-tested in Node.
 */
export function toastText(event: FinalEvent, o: RewardOutcome, title: string, balance?: number, showUsd = false): string {
  // `showUsd` (ToastOptions): the dollar value the relay decided the sats at, "77 sats ($0.05)".
  const usd = showUsd ? o.record?.usd : undefined;
  const sats = `${o.sats} sats${usd !== undefined ? ` ($${usd})` : ''}`;
  const place = o.record?.place;
  if (place !== undefined && (event === 'reward:paid' || event === 'reward:credited')) return prizeText(place, title, o.sats, usd);
  const why = REASONS[o.reason ?? ''] ?? o.reason ?? 'refused';
  const after = o.afterHold ? 'approval' : 'review';
  // A login streak's day (issue 37): "Day 3 streak · +30 sats".
  const day = o.record?.streakDay;
  if (day !== undefined && (event === 'reward:paid' || event === 'reward:credited')) {
    const tail = event === 'reward:credited' ? (balance === undefined ? '' : ` · balance ${balance}`) : o.afterReview ? ` — paid after ${after}` : '';
    return `Day ${day} streak · +${sats}${tail}`;
  }
  if (event === 'reward:credited') return `+${sats} · ${title}${balance === undefined ? '' : ` · balance ${balance}`}`;
  if (event === 'reward:paid') return `+${sats} · ${title} ${o.afterReview ? `— paid after ${after}` : `→ ${o.gamertag}`}`;
  if (event === 'reward:rejected') return `No sats for ${title}: ${why}`;
  if (event === 'reward:failed') return `Payout failed for ${title}${o.afterReview ? ` after ${after}` : ''}: ${why}`;
  if (event === 'reward:held') return `${sats} for ${title} are waiting for approval`;
  return `${sats} for ${title} are being checked`;
}

/** 1st, 2nd, 3rd, 4th, …, 11th, 12th, 13th, 21st. */
const ordinal = (n: number) => `${n}${n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;

/** A tournament's prize (the record's `place`): "🏆 2nd place · Weekly cup · +5,000 sats", with `usd` (showUsd) "+5,000 sats ($3.25)". */
export const prizeText = (place: number, title: string, sats: number, usd?: number) =>
  `🏆 ${ordinal(place)} place · ${title} · +${sats.toLocaleString('en-US')} sats${usd !== undefined ? ` ($${usd})` : ''}`;

/**
 * What a claim sent before the player's play time says (`reward:waiting`), on one line:
 * "Level complete: 20 s of play needed" (`minPlaySeconds` from the catalog), else "Level
 * complete: paid in 12 s".
 */
export function waitingText(title: string, retryAt: number, now: number, minPlaySeconds?: number): string {
  return minPlaySeconds ? `${title}: ${minPlaySeconds} s of play needed` : `${title}: paid in ${Math.max(1, Math.ceil((retryAt - now) / 1000))} s`;
}

/** What a guest's unlock of an achievement paid at once says (`reward:waiting`, `gamertag_required`): kept until it links one. */
export const gamertagWaitText = (title: string) => `${title}: saved, paid once you claim your sats with a gamertag`;

/** What a withdrawal's toast says: "Withdrew 500 sats → ada", or why it failed or waits. */
export function withdrawalText(event: 'withdrawal:paid' | 'withdrawal:failed' | 'withdrawal:review', { withdrawal: w, gamertag }: WithdrawalOutcome): string {
  if (event === 'withdrawal:paid') return `Withdrew ${w.sats} sats → ${gamertag}`;
  if (event === 'withdrawal:failed') return `Withdrawal of ${w.sats} sats failed: ${REASONS[w.reason ?? ''] ?? w.reason ?? 'refused'}; the sats are back`;
  return w.status === 'held' ? `Withdrawal of ${w.sats} sats is waiting for approval` : `Withdrawal of ${w.sats} sats is being checked`;
}

/** withdraw()'s refusals, as a player reads them. */
const REFUSALS: Record<string, string> = {
  below_minimum: 'below the minimum',
  insufficient_balance: 'not enough on the balance',
  over_limit: 'over the limit for now',
  gamertag_required: 'claim your sats with a gamertag first',
  relay_unreachable: 'the reward server is out of reach',
};

/** Why withdraw() was refused, as a player reads it: "Cannot withdraw: below the minimum". */
export const refusalText = (code: string) => `Cannot withdraw: ${REFUSALS[code] ?? code.replace(/_/g, ' ')}`;
