/** A call its group could not make, made alone: its keys stay held until it ends (`madeAlone`). */
export class MadeAlone<R> {
  constructor(readonly answer: Promise<R>) {}
}

/**
 * One call's answer within a group: its value; a promise of it for a call the group hands on to a
 * later group (its own failure rejects it); or a call made alone (`madeAlone`).
 */
export type GroupResult<R> = R | PromiseLike<R> | MadeAlone<R>;

/**
 * A call made alone, outside any group: until it ends, a later call on one of its keys (a player,
 * an entry) waits, as it would have behind it had both gone alone. Calls on other keys go on.
 */
export const madeAlone = <R>(answer: Promise<R>): MadeAlone<R> => new MadeAlone(answer);

type Waiting<I, R> = { item: I; resolve: (r: R | PromiseLike<R>) => void; reject: (e: unknown) => void };

export interface GroupOptions<I> {
  /** The most calls in one group. */
  max?: number;
  /**
   * What a call holds in its group: a call that shares one with a call already in the group waits
   * for the next (two claims of one player must not read their facts before either writes).
   */
  keys?: (item: I) => readonly string[];
}

/**
 * Group commit for PostgreSQL, as SQLite's `db.write` does it in its thread: calls that come
 * while a round trip is under way wait for it, then go together in the next (at most `max`), one
 * statement and one commit for all of them. Each call still resolves only after the commit that
 * holds it. With nothing under way a call goes at the end of this turn of the event loop, with
 * whatever else came in that turn: alone, it waits for nobody.
 *
 * `send` answers each call in order; when it throws, every call of the group fails with it.
 */
export function grouped<I, R>(
  send: (items: readonly I[]) => Promise<ReadonlyArray<GroupResult<R>>>,
  { max = 128, keys }: GroupOptions<I> = {},
): (item: I, again?: boolean) => Promise<R> {
  let waiting: Array<Waiting<I, R>> = [];
  let busy = false;
  /** The keys of calls made alone, until each ends (a count: two may share one). */
  const aloneKeys = new Map<string, number>();
  const keysOf = (item: I) => keys?.(item) ?? [];

  function start() {
    if (busy || !waiting.length) return;
    busy = true;
    setImmediate(flush);
  }

  function holdUntilEnded(ks: readonly string[], answer: Promise<unknown>) {
    for (const k of ks) aloneKeys.set(k, (aloneKeys.get(k) ?? 0) + 1);
    const release = () => {
      for (const k of ks) {
        const n = aloneKeys.get(k)! - 1;
        if (n) aloneKeys.set(k, n);
        else aloneKeys.delete(k);
      }
      start();
    };
    answer.then(release, release);
  }

  async function flush() {
    const group: Array<Waiting<I, R>> = [];
    const later: Array<Waiting<I, R>> = [];
    const held = new Set<string>();
    for (const w of waiting) {
      const ks = keysOf(w.item);
      if (group.length < max && !ks.some((k) => held.has(k) || aloneKeys.has(k))) {
        group.push(w);
        for (const k of ks) held.add(k);
      } else later.push(w);
    }
    waiting = later;
    if (!group.length) {
      // Every call waits on a key made alone: the end of that call starts the next group.
      busy = false;
      return;
    }
    try {
      const results = await send(group.map((w) => w.item));
      if (results.length !== group.length) throw new Error('a grouped statement answered fewer calls than it was sent');
      group.forEach((w, i) => {
        const r = results[i]!;
        if (!(r instanceof MadeAlone)) return w.resolve(r);
        holdUntilEnded(keysOf(w.item), r.answer);
        w.resolve(r.answer);
      });
    } catch (err) {
      for (const w of group) w.reject(err);
    }
    if (waiting.length) void flush();
    else busy = false;
  }

  // `again`: a call its group handed on to the next (busy) goes before the calls that came after
  // it, a later call on its key among them.
  return (item, again = false) =>
    new Promise<R>((resolve, reject) => {
      if (again) waiting.unshift({ item, resolve, reject });
      else waiting.push({ item, resolve, reject });
      start();
    });
}
