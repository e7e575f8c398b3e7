import type { RewardBusEvents, RewardIntent, RewardOutcome } from '../client/events.js';
import type { CatalogEntry } from '../wire/relay-api.js';
import type { Toast, ToastEvent } from './toast-types.js';

export type { ToastEvent } from './toast-types.js';

import { gamertagWaitText, toastText, waitingText, withdrawalText } from './toast-text.js';

/** A credit's toast waits this long for the balance after it, then goes without. */
const CREDIT_WAITS_MS = 3000;

export type ToastPayload<E extends ToastEvent> = Parameters<RewardBusEvents[E]>[0];

/** What the plugin lends the toasts. */
export interface ToastSource {
  entry(achievementId: string): CatalogEntry | undefined;
  /** A tournament's title, for a prize's toast. */
  tournament?(tournamentId: string): string | undefined;
  gamertag(): string;
  pending(): RewardIntent[];
  toast(toast: Toast): void;
  /** ToastOptions' showUsd: a reward's dollar value beside its sats. */
  showUsd?: boolean;
}

/**
 * Turns bus events into toasts. Loaded with the first toast (the plugin's on-demand part), so a
 * game pays for the words when it has something to say.
 */
export function toastEvents(p: ToastSource) {
  const title = (id: string) => p.entry(id)?.title ?? p.tournament?.(id) ?? id;
  const outcome = (o: RewardOutcome, event: Parameters<typeof toastText>[0], balance?: number) => {
    const id = o.intent.achievementId;
    p.toast({
      variant: event.slice(7) as Toast['variant'],
      text: toastText(event, o, title(id), balance, p.showUsd),
      sats: o.sats,
      gamertag: o.gamertag,
      achievementId: id,
      ...(o.reason ? { reason: o.reason } : {}),
    });
  };
  // Sent before the player's play time, or by a guest for a gamertag's payout: said once per
  // intent, with when it will be paid.
  const waited = new Set<string>();
  // Each intent that has to wait for the network says so once: at unlock when the relay is
  // known to be out of reach, or when its first send finds that out.
  const told = new Set<string>();
  const queued = (intent: RewardIntent) => {
    if (told.has(intent.id)) return;
    told.add(intent.id);
    const id = intent.achievementId;
    p.toast({ variant: 'queued', text: `Offline: ${title(id)} saved, paid when back online`, sats: p.entry(id)?.sats ?? 0, gamertag: p.gamertag(), achievementId: id });
  };
  // Credits wait for the balance that follows them (`balance:changed`), to say it; not for long.
  const credits: Array<{ o: RewardOutcome; timer: ReturnType<typeof setTimeout> }> = [];
  const credited = (balance?: number) => {
    for (const c of credits.splice(0)) {
      clearTimeout(c.timer);
      outcome(c.o, 'reward:credited', balance);
    }
  };
  const withdrawal = (event: 'withdrawal:paid' | 'withdrawal:failed' | 'withdrawal:review', w: ToastPayload<typeof event>) =>
    p.toast({
      variant: event === 'withdrawal:paid' ? 'paid' : event === 'withdrawal:failed' ? 'failed' : w.withdrawal.status === 'held' ? 'held' : 'review',
      text: withdrawalText(event, w),
      sats: w.withdrawal.sats,
      gamertag: w.gamertag,
      ...(w.withdrawal.reason ? { reason: w.withdrawal.reason } : {}),
    });
  const on: { [E in ToastEvent]: (e: ToastPayload<E>) => void } = {
    'reward:paid': (o) => outcome(o, 'reward:paid'),
    'reward:credited': (o) => credits.push({ o, timer: setTimeout(credited, CREDIT_WAITS_MS) }),
    'balance:changed': (b) => credited(b.sats),
    'withdrawal:paid': (w) => withdrawal('withdrawal:paid', w),
    'withdrawal:failed': (w) => withdrawal('withdrawal:failed', w),
    'withdrawal:review': (w) => withdrawal('withdrawal:review', w),
    'reward:rejected': (o) => outcome(o, 'reward:rejected'),
    'reward:failed': (o) => outcome(o, 'reward:failed'),
    'reward:review': (o) => outcome(o, 'reward:review'),
    'reward:held': (o) => outcome(o, 'reward:held'),
    'reward:waiting': (e) => {
      const { intent } = e;
      if (waited.has(intent.id)) return;
      waited.add(intent.id);
      const id = intent.achievementId;
      const entry = p.entry(id);
      p.toast({
        variant: 'waiting',
        text: e.reason === 'too_early' ? waitingText(title(id), e.retryAt, Date.now(), entry?.minPlaySeconds) : gamertagWaitText(title(id)),
        sats: entry?.sats ?? 0,
        gamertag: p.gamertag(),
        achievementId: id,
        reason: e.reason,
      });
    },
    'reward:queued': ({ intent }) => queued(intent),
    'ramp:completed': ({ amount, currency }) => {
      const sats = currency === 'SATS' || currency === undefined ? Number(amount ?? 0) : 0;
      p.toast({ variant: 'paid', text: sats ? `Bought ${sats.toLocaleString()} sats` : 'Purchase complete', sats, gamertag: p.gamertag() });
    },
    'ramp:failed': () => p.toast({ variant: 'failed', text: 'The purchase did not go through', sats: 0, gamertag: p.gamertag() }),
    'relay:offline': () => p.pending().forEach(queued),
  };
  return <E extends ToastEvent>(event: E, e: ToastPayload<E>) => (on[event] as (e: ToastPayload<E>) => void)(e);
}

export type SayToast = ReturnType<typeof toastEvents>;
