import type { Outcome } from '../payments/client.js';

/** One dependency's state at the last look, and why it is down when it is. */
export interface PartState {
  state: 'ok' | 'down';
  reason?: string;
}

export interface ReadinessReport {
  store: PartState;
  service: PartState;
  /** The relay began to stop: not ready whatever the rest says, so a balancer sends no more. */
  draining?: true;
}

export interface ReadinessOptions {
  /** The store's trivial query (`RelayStore.ping`). */
  ping: () => Promise<void>;
  /** A cheap call to the payments service (the wallet balance): asked at most once per `serviceEveryMs`. */
  service: () => Promise<Outcome<unknown>>;
  /** How long the store and a fresh service check may take before they count as down. Default 2 s. */
  timeoutMs?: number;
  /** The service is asked at most this often, whoever probes. Default 10 s. */
  serviceEveryMs?: number;
  now?: () => number;
  /** True once the relay began to stop (`Relay.drain`, `close`): then not ready, at once, and nothing is asked. */
  draining?: () => boolean;
}

export interface Readiness {
  check(): Promise<ReadinessReport>;
}

const within = <T>(p: Promise<T>, ms: number): Promise<T> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
};
const STOPPING: PartState = { state: 'down', reason: 'not asked: the relay is stopping' };
const why = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Whether this relay can take requests: its store answers a trivial query now, and the payments
 * service answered a cheap call recently. The service is asked only when probed, at most once
 * per `serviceEveryMs` (one call shared by every prober), never on a payout's path; a probe waits
 * for that call at most `timeoutMs`, then goes by the last answer.
 */
export function createReadiness(options: ReadinessOptions): Readiness {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 2_000;
  const everyMs = options.serviceEveryMs ?? 10_000;
  let service: PartState = { state: 'down', reason: 'not checked yet' };
  let askedAt = -Infinity;
  let inFlight: Promise<PartState> | undefined;

  async function askService(): Promise<PartState> {
    askedAt = now();
    try {
      const r = await options.service();
      service = r.kind === 'ok' ? { state: 'ok' } : { state: 'down', reason: r.kind === 'refused' ? `refused (${r.status})` : r.reason };
    } catch (err) {
      service = { state: 'down', reason: why(err) };
    }
    return service;
  }

  return {
    async check() {
      if (options.draining?.()) return { store: STOPPING, service: STOPPING, draining: true };
      if (!inFlight && now() - askedAt >= everyMs) inFlight = askService().finally(() => (inFlight = undefined));
      const store = within(options.ping(), timeoutMs).then(
        (): PartState => ({ state: 'ok' }),
        (err: unknown): PartState => ({ state: 'down', reason: why(err) }),
      );
      // A service slower than the probe is judged by its last answer.
      const svc = inFlight ? within(inFlight, timeoutMs).catch(() => service) : service;
      return { store: await store, service: await svc };
    },
  };
}
