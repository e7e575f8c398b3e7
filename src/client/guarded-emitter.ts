import { EventEmitter } from 'eventemitter3';

type Listener = (...args: never[]) => unknown;

/**
 * eventemitter3, except that a listener that throws is reported on `error` instead of breaking
 * the emit that called it (and with it the queue's bookkeeping). The rest still hear the event.
 */
export class GuardedEmitter<Events extends { error: (error: Error) => void }> extends EventEmitter<Events> {
  readonly #guards = new WeakMap<Listener, Listener>();
  /** A listener's throw is being told to the `error` listeners. */
  #reporting = false;

  #guard(fn: Listener): Listener {
    let g = this.#guards.get(fn);
    if (!g) {
      const report = (err: unknown) => this.#report(err);
      // One argument: every event of the bus has at most one. No rest parameter or `arguments`,
      // which unlock() would pay for on every emit.
      g = function guarded(this: unknown, e: never) {
        try {
          return fn.call(this, e);
        } catch (err) {
          report(err);
        }
      };
      this.#guards.set(fn, g);
    }
    return g;
  }

  #report(err: unknown) {
    const error = err instanceof Error ? err : new Error(String(err));
    // An error listener that throws itself (while reporting) has nowhere left to go: reported on
    // `error` again, it would throw again, until the stack overflowed out of the emit.
    if (this.#reporting || this.listenerCount('error' as EventEmitter.EventNames<Events>) === 0) return console.error('rewardbus: a listener threw', error);
    this.#reporting = true;
    try {
      super.emit('error' as EventEmitter.EventNames<Events>, ...([error] as unknown as EventEmitter.EventArgs<Events, EventEmitter.EventNames<Events>>));
    } finally {
      this.#reporting = false;
    }
  }

  override on<T extends EventEmitter.EventNames<Events>>(event: T, fn: EventEmitter.EventListener<Events, T>, context?: unknown): this {
    return super.on(event, this.#guard(fn as Listener) as EventEmitter.EventListener<Events, T>, context);
  }
  override addListener<T extends EventEmitter.EventNames<Events>>(event: T, fn: EventEmitter.EventListener<Events, T>, context?: unknown): this {
    return this.on(event, fn, context);
  }
  override once<T extends EventEmitter.EventNames<Events>>(event: T, fn: EventEmitter.EventListener<Events, T>, context?: unknown): this {
    return super.once(event, this.#guard(fn as Listener) as EventEmitter.EventListener<Events, T>, context);
  }
  override off<T extends EventEmitter.EventNames<Events>>(event: T, fn?: EventEmitter.EventListener<Events, T>, context?: unknown, once?: boolean): this {
    const g = fn && (this.#guards.get(fn as Listener) as EventEmitter.EventListener<Events, T> | undefined);
    return super.off(event, g ?? fn, context, once);
  }
  override removeListener<T extends EventEmitter.EventNames<Events>>(event: T, fn?: EventEmitter.EventListener<Events, T>, context?: unknown, once?: boolean): this {
    return this.off(event, fn, context, once);
  }
}
