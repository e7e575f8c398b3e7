import type { FinalEvent, RewardOutcome } from '../events.js';

/** An outcome to say, as its bus would have said it. */
export interface HandedOver {
  event: FinalEvent;
  outcome: RewardOutcome;
}

interface Page {
  /** Intents a destroyed bus was sending, with their outcome once it came (undefined until then). */
  left: Map<string, HandedOver | undefined>;
  /** The live buses that take them: the newest does. */
  takers: Array<(h: HandedOver) => void>;
}

/**
 * Claims that a destroyed bus of this page (or Node process) had on their way, by relay. A send in
 * flight is never aborted (its outcome would be unknown): the destroyed bus awaits its answer
 * and deletes the intent, but its listeners are gone. A game that makes its bus again (a scene
 * restart, a hot reload) finds no intent left to send: the page's next bus on that relay says
 * the outcome, as its own (it shows the toast), once, now or when it starts. A reload ends the
 * page, and with it the send: the next page sends the stored intent again under its key.
 */
const pages = new Map<string, Page>();

function pageOf(name: string): Page {
  let page = pages.get(name);
  if (!page) pages.set(name, (page = { left: new Map(), takers: [] }));
  return page;
}

/** A destroyed bus's sends still on their way; once `answered`, those that ended with no outcome are let go. */
export function leave(name: string, ids: string[], answered: Promise<void>) {
  if (!ids.length) return;
  const { left } = pageOf(name);
  for (const id of ids) left.set(id, undefined);
  void answered.then(() => {
    for (const id of ids) if (left.get(id) === undefined) left.delete(id);
  });
}

/** What the destroyed bus said (to no one): one of its sends left here goes to the newest bus, or waits for the next. */
export function handOver(name: string, h: HandedOver) {
  const page = pageOf(name);
  const id = h.outcome.intent.id;
  // Not a send it left, or already said by a live bus (which heard the record on its stream).
  if (!page.left.has(id)) return;
  const take = page.takers.at(-1);
  if (!take) return void page.left.set(id, h);
  page.left.delete(id);
  take(h);
}

/** A live bus heard this intent's record: true if a destroyed bus here was sending it, so the live one says it as its own, once. */
export function takeLeft(name: string, id: string): boolean {
  return pages.get(name)?.left.delete(id) ?? false;
}

/** A live bus takes what destroyed ones hand over: those already come, then each as it comes. Returns how to stop. */
export function takeHandovers(name: string, take: (h: HandedOver) => void): () => void {
  const page = pageOf(name);
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
