import type { Logger } from 'pino';
import { toCents } from './price.js';

/** What the relay knows of the BTC/USD price. */
export interface PriceReading {
  /** Dollars per bitcoin, to the cent, at the last answer; undefined before the first. */
  btcUsd: number | undefined;
  /** When that answer came (ms); undefined before the first. */
  at: number | undefined;
  /** Why the last refresh failed, when it did (the price before it stands, ageing). */
  error?: string;
}

/** Where the price comes from: the payments service's `GET /v0/btcusd` (dollars per bitcoin). */
export type PriceSource = () => Promise<{ kind: 'ok'; data: number } | { kind: string; reason?: string; status?: number }>;

export interface PricesOptions {
  /** RELAY_PRICE_TTL_SECONDS: refreshed in the background this often. */
  ttlMs: number;
  /** RELAY_PRICE_MAX_AGE_SECONDS: older, a dollar-priced claim is refused (`price_unavailable`). */
  maxAgeMs: number;
  logger?: Pick<Logger, 'warn' | 'info'>;
  now?: () => number;
}

/** A price a claim may be decided at, or how long to wait before asking again. */
export type ClaimPrice = { btcUsd: number } | { unavailable: true; retryAfterSeconds: number };

export interface Prices {
  /** Starts the background refresh (a first one at once). */
  start(): void;
  stop(): void;
  peek(): PriceReading;
  /**
   * The price a dollar-priced claim is decided at: the one held when it is no older than the
   * maximum age (at once: nothing awaited); otherwise one refresh is awaited (shared by every
   * caller), and if the price is still too old, `unavailable`.
   */
  forClaim(): Promise<ClaimPrice>;
  /** The price a sats-priced claim is valued at for a dollar budget: the last known, however old (a refresh awaited only if none ever came). */
  forValue(): Promise<ClaimPrice>;
}

/**
 * The BTC/USD price holder: asks the service every `ttlMs` in the background, so no payout ever
 * waits on it and a claim waits only when the price it holds is too old to use. Made only when the
 * catalog or a budget is in dollars: otherwise nothing is asked.
 */
export function createPrices(source: PriceSource, options: PricesOptions): Prices {
  const now = options.now ?? Date.now;
  const { ttlMs, maxAgeMs, logger } = options;
  let reading: PriceReading = { btcUsd: undefined, at: undefined };
  let inFlight: Promise<void> | undefined;
  let askedAt = -Infinity;
  let timer: ReturnType<typeof setInterval> | undefined;

  async function ask(): Promise<void> {
    askedAt = now();
    let r: Awaited<ReturnType<PriceSource>>;
    try {
      r = await source();
    } catch (err) {
      r = { kind: 'unavailable', reason: err instanceof Error ? err.message : String(err) };
    }
    // Kept to the cent: an answer under half a cent would be held as 0, which prices nothing (and
    // made every dollar amount throw), so it is no price, as 0 or NaN are.
    const cents = r.kind === 'ok' && 'data' in r && Number.isFinite(r.data) ? toCents(r.data) : 0;
    if (cents > 0) {
      if (reading.error) logger?.info({ event: 'price_ok', btcUsd: cents }, 'the BTC/USD price is read again');
      reading = { btcUsd: cents, at: now() };
      return;
    }
    const error = r.kind === 'ok' ? 'not_a_price' : 'status' in r && r.status !== undefined ? `refused_${r.status}` : ('reason' in r && r.reason) || r.kind;
    if (!reading.error) logger?.warn({ event: 'price_refresh_failed', reason: error }, 'could not read the BTC/USD price: the last one ages');
    reading = { ...reading, error };
  }

  const refresh = () => (inFlight ??= ask().finally(() => (inFlight = undefined)));
  const retryAfterSeconds = () => Math.max(1, Math.ceil(Math.min(ttlMs, maxAgeMs) / 1000));
  // A price read "later" than now (the clock was stepped back since) is of unknown age: only the last known (forValue) takes it.
  const usable = (maxAge: number): ClaimPrice | undefined => {
    if (reading.btcUsd === undefined || reading.at === undefined) return undefined;
    const age = now() - reading.at;
    return age <= maxAge && (age >= 0 || maxAge === Number.POSITIVE_INFINITY) ? { btcUsd: reading.btcUsd } : undefined;
  };

  async function priced(maxAge: number): Promise<ClaimPrice> {
    const held = usable(maxAge);
    if (held) return held;
    // Too old (or none yet): one refresh, shared, and not more than once a second for everyone (an ask "later" than now is no guide).
    const sinceAsked = now() - askedAt;
    if (inFlight || sinceAsked < 0 || sinceAsked >= 1_000) await refresh();
    return usable(maxAge) ?? { unavailable: true, retryAfterSeconds: retryAfterSeconds() };
  }

  return {
    start() {
      if (timer) return;
      void refresh();
      timer = setInterval(() => void refresh(), ttlMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
    peek: () => reading,
    forClaim: () => priced(maxAgeMs),
    forValue: () => priced(Number.POSITIVE_INFINITY),
  };
}
