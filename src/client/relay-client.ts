import type { CatalogResponse, PlayerSession, Problem, RampSession, RampSessionRequest, RewardClaim, RewardHistory, RewardRecord, WithdrawalRequestView } from '../wire/relay-api.js';

/** What one request to the relay came to. `unreachable`: no answer (network, timeout). */
export type RelayAnswer<T> =
  | { ok: true; status: number; body: T }
  | { ok: false; status: number; problem?: Problem; retryAfterMs?: number }
  | { ok: false; status: 0; unreachable: true };

export interface RelayClientOptions {
  relayUrl: string;
  fetch?: typeof fetch;
  /** Per request; a timed-out claim is retried with the same key. Default 10 s. */
  timeoutMs?: number;
}

/**
 * A claim (and a link) may wait on the payments service: a gamertag lookup, then the payment.
 * Its answer may take as long as the relay allows for both, which the relay states in its
 * catalog. Until the catalog is known, this much.
 */
const CLAIM_TIMEOUT_MS = 30_000;

/** The relay's HTTP API v1, from the game's side. */
export function createRelayClient({ relayUrl, fetch: f = (...a) => globalThis.fetch(...a), timeoutMs = 10_000 }: RelayClientOptions) {
  const base = relayUrl.replace(/\/$/, '');
  let claimTimeoutMs = Math.max(timeoutMs, CLAIM_TIMEOUT_MS);

  async function call<T>(
    method: 'GET' | 'POST',
    path: string,
    init: { token?: string; body?: unknown; key?: string; timeoutMs?: number } = {},
  ): Promise<RelayAnswer<T>> {
    let res: Response;
    try {
      res = await f(base + path, {
        method,
        headers: {
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
          ...(init.key ? { 'idempotency-key': init.key } : {}),
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        signal: AbortSignal.timeout(init.timeoutMs ?? timeoutMs),
      });
    } catch {
      return { ok: false, status: 0, unreachable: true };
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      body = undefined;
    }
    if (res.ok) return { ok: true, status: res.status, body: body as T };
    const retryAfter = Number(res.headers.get('retry-after'));
    const problem = body && typeof body === 'object' && 'code' in body ? (body as Problem) : undefined;
    return { ok: false, status: res.status, ...(problem ? { problem } : {}), ...(retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}) };
  }

  return {
    link: (gamertag: string) => call<PlayerSession>('POST', '/v1/players', { body: { gamertag }, timeoutMs: claimTimeoutMs }),
    /** The same key must carry the same body on every attempt (a proof included), or the relay answers 422. */
    claim: (token: string, key: string, body: RewardClaim) => call<RewardRecord>('POST', '/v1/rewards', { token, key, body, timeoutMs: claimTimeoutMs }),
    catalog: async () => {
      const a = await call<CatalogResponse>('GET', '/v1/catalog');
      // Wait longer than the relay may take, or a slow payment looks like a lost connection.
      if (a.ok && a.body.claimTimeoutMs) claimTimeoutMs = Math.max(timeoutMs, a.body.claimTimeoutMs + 5_000);
      return a;
    },
    history: (token: string) => call<RewardHistory>('GET', '/v1/rewards', { token }),
    rampSession: (token: string, body: RampSessionRequest) => call<RampSession>('POST', '/v1/ramp-sessions', { token, body }),
    withdrawal: (token: string, id: string) => call<WithdrawalRequestView>('GET', `/v1/withdrawal-requests/${encodeURIComponent(id)}`, { token }),
    /** The player's event stream, for EventSource (which cannot send headers). */
    eventsUrl: (token: string) => `${base}/v1/events?token=${encodeURIComponent(token)}`,
  };
}

export type RelayClient = ReturnType<typeof createRelayClient>;
