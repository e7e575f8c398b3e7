import type { FinalEvent, RewardOutcome } from '../events.js';
import type { RewardStorage } from '../storage/index.js';

/** An outcome to say, as its bus would have said it. */
export interface HandedOver {
  event: FinalEvent;
  outcome: RewardOutcome;
}

export interface HandoverPage {
  /** Intents a destroyed bus was sending, with their outcome once it came (undefined until then). */
  left: Map<string, HandedOver | undefined>;
  /** The live buses that take them: the newest does. */
  takers: Array<(h: HandedOver) => void>;
}

/**
 * Claims that a destroyed bus of this page (or Node process) had on their way, by storage and
 * relay. A send in flight is never aborted (its outcome would be unknown): the destroyed bus awaits
 * its answer and deletes the intent, but its listeners are gone. A game that makes its bus again
 * (a scene restart, a hot reload, a framework that makes the new one before it destroys the old)
 * finds no intent left to send: the newest live bus on that storage and relay says the outcome, as
 * its own (it shows the toast), once, now or when it starts. Not a bus on other storage (another
 * player's queue). A reload ends the page, and with it the send: the next page sends the stored
 * intent again under its key.
 */
const pages = new WeakMap<RewardStorage, Map<string, HandoverPage>>();

/** Where the buses on this storage and relay, in this page or process, hand over what a destroyed one had on its way. */
export function handoverPage(storage: RewardStorage, relayUrl: string): HandoverPage {
  let byRelay = pages.get(storage);
  if (!byRelay) pages.set(storage, (byRelay = new Map()));
  let page = byRelay.get(relayUrl);
  if (!page) byRelay.set(relayUrl, (page = { left: new Map(), takers: [] }));
  return page;
}

/** A destroyed bus's sends still on their way; once `answered`, those that ended with no outcome are let go. */
export function leave({ left }: HandoverPage, ids: string[], answered: Promise<void>) {
  // Another destroyed bus's outcome for the same intent, already come, stays.
  for (const id of ids) if (!left.has(id)) left.set(id, undefined);
  void answered.then(() => {
    for (const id of ids) if (left.get(id) === undefined) left.delete(id);
  });
}

/** What the destroyed bus said (to no one): one of its sends left here goes to the newest live bus, or waits for the next. */
export function handOver(page: HandoverPage, h: HandedOver) {
  const id = h.outcome.intent.id;
  // Not a send it left, or already said by a live bus (which heard the record on its stream).
  if (!page.left.has(id)) return;
  const take = page.takers.at(-1);
  if (!take) return void page.left.set(id, h);
  page.left.delete(id);
  take(h);
}

/** A live bus heard this intent's record: true if a destroyed bus here was sending it, so the live one says it as its own, once. */
export function takeLeft({ left }: HandoverPage, id: string): boolean {
  return left.delete(id);
}

/** A live bus takes what destroyed ones hand over: those already come, then each as it comes. Returns how to stop. */
export function takeHandovers(page: HandoverPage, take: (h: HandedOver) => void): () => void {
  page.takers.push(take);
  for (const [id, h] of page.left) {
    if (!h) continue;
    page.left.delete(id);
    take(h);
  }
  return () => {
    const at = page.takers.indexOf(take);
    if (at >= 0) page.takers.splice(at, 1);
  };
}
