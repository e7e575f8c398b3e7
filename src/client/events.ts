import type { BalanceView, GuestMerge, PlayerSession, RewardRecord, WithdrawalView } from '../wire/relay-api.js';

/** An achievement the game unlocked, on its way to the relay. Its id is the idempotency key. */
export interface RewardIntent {
  /** A UUID minted at unlock and sent with every attempt: the relay pays it at most once. */
  id: string;
  achievementId: string;
  /** ISO 8601, when the game called unlock(). */
  occurredAt: string;
  /** The player it was earned by; set at unlock, or at link when unlocked before any. */
  userId?: string;
  /** The game's own data, kept on this device and handed back in events. */
  details?: Record<string, string | number | boolean>;
  /**
   * The game server's unlock proof, for achievements with `proof: 'server'`
   * (docs/unlock-proofs.md): stored with the intent and sent in every attempt's claim body.
   */
  proof?: string;
  attempts: number;
  /** Not sent before (ms since the epoch): backoff after a failed attempt. */
  nextAttemptAt: number;
  /**
   * Not sent before (ms since the epoch) whatever happens: the relay said the player has not
   * played long enough yet (`too_early`). Coming back online does not hurry it.
   */
  notBefore?: number;
  /**
   * Balance mode: the relay said a guest cannot claim this achievement, paid at once to a
   * gamertag (`gamertag_required`). Kept, and not sent while the player is that guest; link()
   * makes it the player's and sends it again, with the same key.
   */
  waitsForGamertag?: true;
}

/** `link()`'s options. */
export interface LinkOptions {
  /** Another player's referral code: counts on this player's first link with the relay only. */
  referralCode?: string;
  /** For a relay with a human check at link (`verifyLink`): the captcha's response token. */
  humanCheck?: string;
}

/** unlock()'s options. */
export interface UnlockOptions {
  /** The unlock proof the game's server signed for this player and achievement (`proof: 'server'`). */
  proof?: string;
}

/** How an intent ended, as every tab hears it. */
export interface RewardOutcome {
  intent: RewardIntent;
  /** The relay's record; absent when the relay refused the request itself (then see `reason`). */
  record?: RewardRecord;
  /** Sats paid or that would have been. */
  sats: number;
  gamertag: string;
  /** A stable code for rejected, failed and review outcomes. */
  reason?: string;
  /** True in the tabs that only heard of it: the one that got the answer shows the toast. */
  remote: boolean;
  /**
   * The relay settled (paid or failed) a reward this device had said was being checked
   * (`reward:review`): the same reward's second outcome, said once. For a settlement that was
   * not this tab's own answer, it is said as this tab's (`remote: false`, toast-worthy) where the
   * page is visible, so the player sees it once whichever tab hears it first.
   */
  afterReview?: true;
  /** With `afterReview`: the wait was an operator's hold (`reward:held`): approved (paid) or denied. */
  afterHold?: true;
}

/** The events that end an intent on this device: the last two are waits the relay settles later. */
export type FinalEvent = 'reward:paid' | 'reward:credited' | 'reward:rejected' | 'reward:failed' | 'reward:review' | 'reward:held';

/**
 * The event a record's status calls for. paid, credited (balance mode), rejected and failed are
 * final; pending has none (the relay is still at it); held waits for an operator (`reward:held`);
 * needs_review, and any status this client does not know, is a wait: `reward:review`. Both waits
 * are settled later.
 */
export function eventOf(status: string): FinalEvent | undefined {
  if (status === 'pending') return undefined;
  if (status === 'held') return 'reward:held';
  return status === 'paid' || status === 'credited' || status === 'rejected' || status === 'failed' ? `reward:${status}` : 'reward:review';
}

/** A withdrawal from the balance, as the bus says it: the tab that asked for it, or the event stream. */
export interface WithdrawalOutcome {
  withdrawal: WithdrawalView;
  gamertag: string;
  /** True where the page is hidden and this tab did not ask for it: another tab (or device) shows it. */
  remote: boolean;
}

/** How the ramp widget ended: from openRamp(), or told by rampEnded(). */
export type RampResult = { type: 'success'; data: unknown } | { type: 'error'; error: unknown } | { type: 'close' };

/**
 * An intent kept and sent again later (`reward:waiting`), by `reason`: `too_early`, at `retryAt`
 * (ms since the epoch, this device's clock); `gamertag_required`, once the guest links a gamertag.
 */
export type RewardWaiting = { intent: RewardIntent; retryAt: number; reason: 'too_early' } | { intent: RewardIntent; reason: 'gamertag_required' };

/** Every event the bus emits, and its listener's signature. */
export interface RewardBusEvents {
  /** Stored on this device; `offline` when the relay cannot be reached right now. */
  'reward:queued': (e: { intent: RewardIntent; sats?: number; offline: boolean }) => void;
  /** An attempt is on its way to the relay. */
  'reward:sent': (e: { intent: RewardIntent; attempt: number }) => void;
  'reward:paid': (e: RewardOutcome) => void;
  /**
   * Balance mode: credited to the player's balance (final; withdrawn later with withdraw()).
   * `balance:changed` follows with the new balance.
   */
  'reward:credited': (e: RewardOutcome) => void;
  /** Refused by the relay's rules or as bad input: final, never retried. */
  'reward:rejected': (e: RewardOutcome) => void;
  /** The service refused the payment; nothing was paid. */
  'reward:failed': (e: RewardOutcome) => void;
  /**
   * The outcome with the service is unclear (needs_review, or a status this client does not know);
   * the relay settles it, never paying twice. Its settlement follows as `reward:paid` or `reward:failed`
   * with `afterReview`, heard on the event stream or in the history at the next link or reload.
   */
  'reward:review': (e: RewardOutcome) => void;
  /**
   * Waits for an operator to approve it (the catalog's `hold`, or a large reward): the relay has
   * it, so it leaves the queue, but it is not paid yet. Its outcome follows as `reward:paid`
   * (approved), `reward:rejected` (`denied_by_operator`) or `reward:failed`, with `afterReview`
   * and `afterHold`, heard on the event stream or in the history at the next link or reload.
   */
  'reward:held': (e: RewardOutcome) => void;
  /**
   * The intent stays queued and is sent again, with the same key; nothing is lost, not an error.
   * `too_early`: the player has not played long enough for it yet (the catalog's
   * `minPlaySeconds`; 425), sent at `retryAt` (ms since the epoch, this device's clock).
   * `gamertag_required` (balance mode): a guest unlocked an achievement paid at once, to a
   * gamertag (403); sent once the player links one with link(). Read `retryAt` after `reason`.
   */
  'reward:waiting': (e: RewardWaiting) => void;
  /** unlock() made no request: the player cannot earn it now (once-only, daily, cooldown, unknown). */
  'reward:skipped': (e: { achievementId: string; reason: string; retryAt?: number }) => void;
  'player:linked': (player: PlayerSession) => void;
  /**
   * The relay's human check refused to renew a player's token: their intents wait for
   * link(gamertag, { humanCheck }). `current`: the player linked now; if not, linking them would
   * switch players: theirs wait until they link again.
   */
  'player:check': (e: { gamertag: string; userId: string; current: boolean }) => void;
  /** A guest linked a gamertag: what moved from the guest's balance to the player's (`player:linked` follows). */
  'player:merged': (merge: GuestMerge) => void;
  /** Balance mode: the player's balance as the relay last said it, after a credit, a withdrawal or balance(). */
  'balance:changed': (balance: BalanceView) => void;
  /** A withdrawal was paid to the player's gamertag. */
  'withdrawal:paid': (e: WithdrawalOutcome) => void;
  /** A withdrawal failed: nothing was paid, and its sats are back on the balance. */
  'withdrawal:failed': (e: WithdrawalOutcome) => void;
  /** A withdrawal waits: for an operator (`held`), or its outcome is being checked (`needs_review`); paid or failed follows. */
  'withdrawal:review': (e: WithdrawalOutcome) => void;
  /** The ramp widget's own callbacks, from openRamp(). */
  'ramp:success': (data: unknown) => void;
  'ramp:error': (error: unknown) => void;
  'ramp:close': () => void;
  /** A purchase settled or failed, as the service told the relay (on any of the player's devices). */
  'ramp:completed': (e: { amount?: string | number; currency?: string; referenceId?: string }) => void;
  'ramp:failed': (e: { referenceId?: string }) => void;
  'relay:offline': () => void;
  'relay:online': () => void;
  /** Something went wrong that the bus handled: a listener threw, storage failed, a link failed. */
  error: (error: Error) => void;
}
