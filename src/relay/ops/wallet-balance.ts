import type { Outcome } from '../payments/client.js';

/** What is known of the project wallet, the one every reward is paid from. */
export interface WalletReading {
  /** Whole sats at the last successful check; undefined before the first one. */
  balanceSats: number | undefined;
  /** When that check answered (ms since the epoch); undefined before the first one. */
  checkedAt: number | undefined;
  /** Below `lowSats` at the last check, or a payout was refused for insufficient balance since. */
  low: boolean;
  /** Why the last check failed, when it did (the reading before it stands). */
  error?: string;
}

export interface WalletBalanceOptions {
  /** Below this the wallet is low: a warning is logged. The relay's `RELAY_WALLET_LOW_SATS`, by default a day's budget. */
  lowSats: number;
  /** The service is asked at most once in this long, whatever the callers do. Default 60 s. */
  maxAgeMs?: number;
  logger?: WalletLogger;
  now?: () => number;
}

/** The two levels it logs at; a pino logger fits. */
export interface WalletLogger {
  warn(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
}

export interface WalletBalance {
  /**
   * The reading, checked with the service first when the last check is older than `maxAgeMs`
   * (one call at a time, shared by every caller). For the admin page and a metrics scrape;
   * never for a payout, which must not wait on it.
   */
  read(): Promise<WalletReading>;
  /** The reading as it stands, without asking the service. */
  peek(): WalletReading;
  /** A payout was refused with "Insufficient balance in project wallet": low at once, no call made. */
  noteInsufficientBalance(): void;
  /** Below this, the wallet is low. */
  readonly lowSats: number;
}

/**
 * A cached reader of the project wallet's balance. It asks the service at most once a minute,
 * and only when read: nothing here runs on a payout's path.
 */
export function createWalletBalance(payments: { wallet(): Promise<Outcome<number>> }, options: WalletBalanceOptions): WalletBalance {
  const now = options.now ?? Date.now;
  const maxAgeMs = options.maxAgeMs ?? 60_000;
  const { lowSats, logger } = options;
  let reading: WalletReading = { balanceSats: undefined, checkedAt: undefined, low: false };
  // When the service was last asked, answered or not: a failing service is not asked more often.
  let askedAt = -Infinity;
  let refusedAt = -Infinity;
  let inFlight: Promise<WalletReading> | undefined;

  function setLow(low: boolean, fields: object) {
    if (low && !reading.low) logger?.warn({ event: 'wallet_low', lowSats, ...fields }, 'the project wallet is low: top it up, or payouts will be refused');
    if (!low && reading.low) logger?.info({ event: 'wallet_ok', lowSats, ...fields }, 'the project wallet is above its low mark again');
  }

  async function check(): Promise<WalletReading> {
    const asked = (askedAt = now());
    let r: Outcome<number>;
    try {
      r = await payments.wallet();
    } catch (err) {
      r = { kind: 'unavailable', reason: err instanceof Error ? err.message : String(err) };
    }
    if (r.kind !== 'ok') {
      const error = r.kind === 'refused' ? `refused_${r.status}` : r.reason;
      // A refused key is said by the payments client (service_refused_key): once, not twice.
      const keyRefused = r.kind === 'refused' && (r.status === 401 || r.status === 403);
      if (!keyRefused) logger?.warn({ event: 'wallet_check_failed', reason: error }, 'could not read the project wallet balance');
      reading = { ...reading, error };
      return reading;
    }
    // A refusal noted while this check was under way is newer than its answer: still low.
    const low = r.data < lowSats || refusedAt >= asked;
    setLow(low, { balanceSats: r.data });
    reading = { balanceSats: r.data, checkedAt: now(), low };
    return reading;
  }

  return {
    read() {
      if (inFlight) return inFlight;
      if (now() - askedAt < maxAgeMs) return Promise.resolve(reading);
      inFlight = check().finally(() => (inFlight = undefined));
      return inFlight;
    },
    peek: () => reading,
    lowSats,
    noteInsufficientBalance() {
      refusedAt = now();
      setLow(true, { balanceSats: reading.balanceSats, reason: 'insufficient_balance' });
      reading = { ...reading, low: true };
    },
  };
}
