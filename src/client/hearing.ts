import type { PlayerSession, RewardRecord } from '../wire/relay-api.js';
import type { BalanceMode } from './balance-mode.js';
import { eventOf } from './events.js';
import type { Outcomes } from './outcomes/index.js';
import type { PlayerSessions } from './players/index.js';
import type { IntentQueue } from './queue/index.js';
import type { TabMessage } from './tabs/index.js';

/** What the courier hears from elsewhere needs of it. */
export interface HearingParts {
  queue: IntentQueue;
  outcomes: Outcomes;
  sessions: PlayerSessions;
  balance: BalanceMode;
  /** Takes in a player another tab linked. */
  adopt(player: PlayerSession): Promise<void>;
  /** True (once) if a destroyed bus of this page was sending this intent: its outcome is this bus's to show. */
  leftHere(id: string): boolean;
  destroyed(): boolean;
}

/** What another tab said: a player it linked, or an outcome it heard. */
export function heardFromTab(p: HearingParts, m: TabMessage) {
  if (p.destroyed()) return;
  if (m.type === 'lock') return p.queue.yieldLock();
  if (m.type === 'linked') {
    const { userId } = m.player;
    // Only the player this queue's storage now holds: a tab of another queue on the relay (a save
    // slot an earlier version named alike, a storage of the game's own with no name) links its
    // own, and of two links heard in a row the later one is stored.
    void p.sessions.stored().then((stored) => {
      if (stored?.userId !== userId || p.destroyed()) return;
      // The player this tab waits on linked there (their human check passed): the wait ends here
      // too, the event stream reopens on the new token, and their intents go.
      if (p.sessions.waitsForLink(userId)) void p.adopt(m.player).then(() => p.queue.flush());
      else if (userId !== p.sessions.current?.userId) void p.adopt(m.player);
    });
    return;
  }
  // Another tab had the relay's final answer: the intent leaves this tab's queue too.
  p.queue.forget(m.outcome.intent.id);
  p.outcomes.settle(m.outcome, m.event);
}

/** A record on the player's event stream: an answer for good to an intent still queued here ends it. */
export function heardRecord(p: HearingParts, record: RewardRecord) {
  // A withdrawal (balance mode) is no reward intent: the wallet says it.
  if (record.kind === 'withdrawal') return void p.balance.wallet().then((w) => w.heardRecord(record));
  if (!eventOf(record.status)) return;
  const id = record.idempotencyKey ?? record.id;
  // Said as this tab's own (with a toast) only when this tab is sending it, or a bus of this page
  // destroyed as it sent it: another tab of the game may hold the same stored intent and will
  // hear its own answer.
  const own = p.queue.sending(id) || p.leftHere(id);
  p.outcomes.heardRecord(record, p.queue.forget(id), own);
}
