import type { FinalEvent, RewardOutcome } from '../events.js';
import type { RewardStorage } from '../storage/index.js';

/** An outcome to say, as its bus would have said it. */
export interface HandedOver {
  event: FinalEvent;
  outcome: RewardOutcome;
}

/** A destroyed bus's send: its outcome once it came (undefined until then), for a bus made after `madeBefore`. */
interface Left {
  h: HandedOver | undefined;
  /** Buses made when it was destroyed: only a later one takes it. */
  madeBefore: number;
}

/** A live bus that takes what destroyed ones hand over, and when it was made (bus.ts counts them). */
interface Taker {
  made: number;
  take(h: HandedOver): void;
}

export interface HandoverPage {
  left: Map<string, Left>;
  /** The live buses, oldest first: the newest made after the destroy takes each. */
  takers: Taker[];
}

/**
 * Claims that a destroyed bus of this page (or Node process) had on their way, by storage and
 * relay. A send in flight is never aborted (its outcome would be unknown): the destroyed bus awaits
 * its answer and deletes the intent, but its listeners are gone. A game that makes its bus again
 * (a scene restart, a hot reload) finds no intent left to send: the page's next bus on that
 * storage and relay says the outcome, as its own (it shows the toast), once, now or when it
 * starts. Not a bus made before the destroy (another at work beside it), nor one on other storage
 * (another player's queue). A reload ends the page, and with it the send: the next page sends the
 * stored intent again under its key.
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

/**
 * A destroyed bus's sends still on their way, `made` buses having been made by then; once
 * `answered`, those that ended with no outcome are let go.
 */
export function leave({ left }: HandoverPage, made: number, ids: string[], answered: Promise<void>) {
  for (const id of ids) left.set(id, { h: undefined, madeBefore: made });
  void answered.then(() => {
    for (const id of ids) if (!left.get(id)?.h) left.delete(id);
  });
}

/** What the destroyed bus said (to no one): one of its sends left here goes to the newest bus made since, or waits for one. */
export function handOver(page: HandoverPage, h: HandedOver) {
  const id = h.outcome.intent.id;
  const left = page.left.get(id);
  // Not a send it left, or already said by a live bus (which heard the record on its stream).
  if (!left) return;
  left.h = h;
  for (let i = page.takers.length; i--; ) {
    const taker = page.takers[i]!;
    if (taker.made > left.madeBefore) {
      page.left.delete(id);
      return taker.take(h);
    }
  }
}

/** A live bus, made `made`-th, heard this intent's record: true if a destroyed bus here was sending it, so the live one says it as its own, once. */
export function takeLeft({ left }: HandoverPage, made: number, id: string): boolean {
  return (left.get(id)?.madeBefore ?? made) < made && left.delete(id);
}

/** A live bus, made `made`-th, takes what destroyed ones hand over: those already come, then each as it comes. Returns how to stop. */
export function takeHandovers(page: HandoverPage, made: number, take: (h: HandedOver) => void): () => void {
  const taker = { made, take };
  page.takers.push(taker);
  for (const [id, { h, madeBefore }] of page.left) {
    if (!h || madeBefore >= made) continue;
    page.left.delete(id);
    take(h);
  }
  return () => {
    const at = page.takers.indexOf(taker);
    if (at >= 0) page.takers.splice(at, 1);
  };
}
