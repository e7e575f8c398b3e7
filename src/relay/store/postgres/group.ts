/**
 * One call's answer within a group: its value, or a promise of it for a call the group hands on
 * (made later, or alone; its own failure rejects it).
 */
export type GroupResult<R> = R | PromiseLike<R>;

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
 * `send` answers each call in order; when it throws, every call of the group fails with it. The
 * next group starts once `send` has returned: calls it makes again alone it waits for first
 * (`allEnded`), since the next group may hold a later call on one of their keys.
 */
export function grouped<I, R>(send: (items: readonly I[]) => Promise<ReadonlyArray<GroupResult<R>>>, { max = 128, keys }: GroupOptions<I> = {}): (item: I, again?: boolean) => Promise<R> {
  let waiting: Array<Waiting<I, R>> = [];
  let busy = false;

  async function flush() {
    const group: Array<Waiting<I, R>> = [];
    const later: Array<Waiting<I, R>> = [];
    const held = new Set<string>();
    for (const w of waiting) {
      const ks = keys?.(w.item) ?? [];
      if (group.length < max && !ks.some((k) => held.has(k))) {
        group.push(w);
        for (const k of ks) held.add(k);
      } else later.push(w);
    }
    waiting = later;
    try {
      const results = await send(group.map((w) => w.item));
      if (results.length !== group.length) throw new Error('a grouped statement answered fewer calls than it was sent');
      group.forEach((w, i) => w.resolve(results[i]!));
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
      if (busy) return;
      busy = true;
      setImmediate(flush);
    });
}

/**
 * The answers of a group's calls made again alone (the group could not be made together), once
 * every one has ended, failures included: a later call on one of their keys, kept for the next
 * group, must come after them, as it would have behind them had each gone alone.
 */
export async function allEnded<R>(answers: ReadonlyArray<Promise<R>>): Promise<ReadonlyArray<Promise<R>>> {
  await Promise.allSettled(answers);
  return answers;
}
