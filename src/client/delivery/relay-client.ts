import type {
  BalanceView,
  BatchedRewardClaim,
  CatalogResponse,
  EventStreamTicket,
  LinkPlayerRequest,
  PlayerSession,
  Problem,
  RampSession,
  RampSessionRequest,
  ReferralCodeResponse,
  RewardClaim,
  RewardClaimBatchResult,
  RewardHistory,
  RewardRecord,
  WithdrawalRequest,
  WithdrawalRequestView,
  WithdrawalView,
} from '../../wire/relay-api.js';
import { IDEMPOTENT_REPLAYED_HEADER } from '../../wire/relay-api.js';
import { RelayClock } from './relay-clock.js';

/**
 * What one request to the relay came to. `unreachable`: no answer from the relay (network,
 * timeout), or another server's (`foreign`: its status, and what to check).
 */
export type RelayAnswer<T> =
  | { ok: true; status: number; body: T }
  | { ok: false; status: number; problem?: Problem; retryAfterMs?: number }
  | { ok: false; status: 0; unreachable: true; foreign?: { status: number; why: string } };

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

/** A claim's record made for this request (not a replay's): created while it was under way. */
const createdNow = (r: RewardRecord, replayed: boolean) => (replayed || typeof r.createdAt !== 'string' ? [] : [r.createdAt]);
const batchCreatedNow = (b: RewardClaimBatchResult) =>
  (Array.isArray(b.results) ? b.results : []).flatMap((r) => (r && 'reward' in r && !r.replayed && typeof r.reward?.createdAt === 'string' ? [r.reward.createdAt] : []));

/** A session as the relay makes one: another server's JSON at /v1/players is none (its player's intents are not the relay's to end). */
const isSession = (s: PlayerSession) => typeof s.userId === 'string' && typeof s.token === 'string';

const resumeAfter = (lastEventId: string | undefined) => (lastEventId ? `&lastEventId=${encodeURIComponent(lastEventId)}` : '');

/** The relay's HTTP API v1, from the game's side. */
export function createRelayClient(options: RelayClientOptions) {
  const base = options.relayUrl.replace(/\/$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  let claimTimeoutMs = Math.max(timeoutMs, CLAIM_TIMEOUT_MS);
  /** Claims per request: more than one once the catalog says the relay takes batches. */
  let batchMax = 1;
  const clock = new RelayClock();

  /** `everyRelay`: a route every relay has, so its `not_found` or `method_not_allowed` says the address is wrong, not the request. */
  async function call<T>(
    method: 'GET' | 'POST',
    path: string,
    init: {
      token?: string;
      body?: unknown;
      key?: string;
      timeoutMs?: number;
      everyRelay?: true;
      /** When the relay created what it answers, for this request (a claim's new record): it bounds the relay's clock. */
      created?: (body: T, replayed: boolean) => Iterable<string>;
      /** What its success must be (a session: a userId and a token); other JSON is another server's. */
      shaped?: (body: T) => boolean;
    },
  ): Promise<RelayAnswer<T>> {
    const headers: Record<string, string> = {};
    // The relay never redirects: a redirect is a proxy's (http:// moved to https://, an old host).
    // Followed, a POST would arrive as a GET (the relay's 405, or another route's 200, taken for
    // its answer) and the player's token would go where it points. Never followed: out of reach.
    const req: RequestInit = { method, headers, redirect: 'manual', signal: AbortSignal.timeout(init.timeoutMs ?? timeoutMs) };
    if (init.body !== undefined) {
      headers['content-type'] = 'application/json';
      req.body = JSON.stringify(init.body);
    }
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    if (init.key) headers['idempotency-key'] = init.key;
    let res: Response;
    const sent = Date.now();
    try {
      // The runtime's fetch is looked up at each call, so a page that replaces it later is heard.
      res = await (options.fetch ?? fetch)(base + path, req);
    } catch {
      return { ok: false, status: 0, unreachable: true };
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      body = undefined;
    }
    const received = Date.now();
    /** The relay's own answer: its clock, where it can be read (no shared cache keeps a POST's or a player's answer). */
    const stamped = () => {
      if (init.token || method === 'POST') clock.read(Date.parse(res.headers.get('date') ?? ''), sent, received, 1000);
    };
    // Every answer of the relay's is a JSON object, and every refusal a problem document with its
    // code. Anything else is another server's (a proxy's error page, a maintenance page served
    // as 200 while the relay restarts, a captive portal, a relayUrl that names the game's own
    // host): the relay's answer, if any, is not in it, so nothing is ended or read from it.
    // Taken as out of reach; what is sent again under its key gets the relay's own.
    const object = !!body && typeof body === 'object';
    // A refusal of the relay's says so in its type too: another server's JSON may have a `code` (a gateway's, an API's).
    const problem = object && !res.ok && typeof (body as Problem).code === 'string' && !!res.headers.get('content-type')?.startsWith('application/problem+json');
    if (res.ok && object && (init.shaped?.(body as T) ?? true)) {
      stamped();
      for (const at of init.created?.(body as T, res.headers.has(IDEMPOTENT_REPLAYED_HEADER)) ?? []) clock.read(Date.parse(at), sent, received);
      return { ok: true, status: res.status, body: body as T };
    }
    if (!problem) {
      const type = res.headers.get('content-type')?.split(';')[0] || 'no content type';
      const to = res.headers.get('location');
      // A browser shows a redirect it did not follow as status 0, and not where it went.
      const answered = res.type === 'opaqueredirect' ? 'redirected elsewhere' : `answered ${res.status} (${type})${to ? ` redirecting to ${to}` : ''}`;
      const why = `${base + path} ${answered}, not the relay: check relayUrl and any proxy in front of the relay`;
      return { ok: false, status: 0, unreachable: true, foreign: { status: res.status, why } };
    }
    stamped();
    const { code } = body as Problem;
    // A relay, but not at this path (a proxy that passes relayUrl's path on as it is): it decided nothing.
    if (init.everyRelay && (code === 'not_found' || code === 'method_not_allowed')) {
      const why = `${base + path} answered ${res.status} ${code}: a relay, but not at this path: check relayUrl's path and any proxy in front of the relay`;
      return { ok: false, status: 0, unreachable: true, foreign: { status: res.status, why } };
    }
    const retryAfter = Number(res.headers.get('retry-after'));
    const failed: RelayAnswer<T> = { ok: false, status: res.status, problem: body as Problem };
    if (retryAfter > 0) failed.retryAfterMs = retryAfter * 1000;
    return failed;
  }

  /** The same key must carry the same body on every attempt (a proof included), or the relay answers 422. */
  const claim = (token: string, key: string, body: RewardClaim) =>
    call<RewardRecord>('POST', '/v1/rewards', { token, key, body, timeoutMs: claimTimeoutMs, everyRelay: true, created: createdNow });

  return {
    /** How far the relay's clock is ahead of this device's, as its answers bound it. */
    clock,
    /** `guestToken`: a guest's, whose credits move to the player (balance mode). */
    link: (gamertag: string, guestToken?: string, { referralCode, humanCheck }: Pick<LinkPlayerRequest, 'referralCode' | 'humanCheck'> = {}) =>
      call<PlayerSession>('POST', '/v1/players', {
        body: { gamertag, ...(guestToken ? { guestToken } : {}), ...(referralCode ? { referralCode } : {}), ...(humanCheck ? { humanCheck } : {}) },
        timeoutMs: claimTimeoutMs,
        everyRelay: true,
        shaped: isSession,
      }),
    /** The player's own referral code (a relay with a referral program). */
    referralCode: (token: string) => call<ReferralCodeResponse>('GET', '/v1/referral-code', { token }),
    /** A guest (balance mode): earns before a gamertag is linked. With a guest's token: the same guest, renewed. */
    guest: (guestToken?: string) => call<PlayerSession>('POST', '/v1/players', { body: guestToken ? { guestToken } : {}, everyRelay: true, shaped: isSession }),
    balance: (token: string) => call<BalanceView>('GET', '/v1/balance', { token }),
    /** The same key on every attempt: the relay pays a withdrawal at most once. */
    withdraw: (token: string, key: string, body: WithdrawalRequest) =>
      call<WithdrawalView>('POST', '/v1/withdrawals', { token, key, body, timeoutMs: claimTimeoutMs, everyRelay: true }),
    /** Witnessed play: a heartbeat while the game is visible. */
    play: (token: string) => call<{ playSeconds: number }>('POST', '/v1/play', { token }),
    claim,
    get batchMax() {
      return batchMax;
    },
    /**
     * Several claims of one player in one request; each answer as `claim` would have had it.
     * An answer to the request that is no answer to its claims (a proxy's 403, a body that does
     * not match them) ends none of them: they are sent again one by one.
     */
    claimAll: async (token: string, claims: BatchedRewardClaim[]): Promise<RelayAnswer<RewardRecord>[]> => {
      const a = await call<RewardClaimBatchResult>('POST', '/v1/rewards/batch', { token, body: { claims }, timeoutMs: claimTimeoutMs, created: batchCreatedNow });
      const results = a.ok ? a.body?.results : undefined;
      if (
        Array.isArray(results) &&
        results.length === claims.length &&
        results.every((r, i) => r?.idempotencyKey === claims[i]!.idempotencyKey && typeof r.status === 'number' && ('reward' in r || 'problem' in r))
      ) {
        return results.map((r) =>
          'reward' in r
            ? { ok: true, status: r.status, body: r.reward }
            : { ok: false, status: r.status, problem: r.problem, ...(r.retryAfter ? { retryAfterMs: r.retryAfter * 1000 } : {}) },
        );
      }
      // Not now (offline, a lapsed token, too many, the relay or its proxy busy, a maintenance
      // page's 200): each claim is told so, and waits. Another refusal of the batch's path (an
      // older relay's 404, a proxy's 403 for it alone) is none of theirs: they go one by one.
      const status = 'unreachable' in a ? (a.foreign?.status ?? 0) : a.status;
      if (!a.ok && (status < 300 || status === 401 || status === 408 || status === 429 || status >= 500)) return claims.map(() => a as RelayAnswer<RewardRecord>);
      // Another server's refusal may be the batch path's alone: the next batch is tried again.
      if (!('unreachable' in a)) batchMax = 1;
      const answers: RelayAnswer<RewardRecord>[] = [];
      for (const { idempotencyKey, ...body } of claims) {
        const one = answers.length && 'unreachable' in answers.at(-1)! ? answers.at(-1)! : await claim(token, idempotencyKey, body);
        answers.push(one);
      }
      return answers;
    },
    catalog: async () => {
      const a = await call<CatalogResponse>('GET', '/v1/catalog', {});
      // Wait longer than the relay may take, or a slow payment looks like a lost connection.
      if (a.ok && a.body.claimTimeoutMs) claimTimeoutMs = Math.max(timeoutMs, a.body.claimTimeoutMs + 5_000);
      if (a.ok) batchMax = a.body.claimBatchMax ?? 1;
      return a;
    },
    history: (token: string) => call<RewardHistory>('GET', '/v1/rewards', { token }),
    rampSession: (token: string, body: RampSessionRequest) => call<RampSession>('POST', '/v1/ramp-sessions', { token, body }),
    withdrawal: (token: string, id: string) => call<WithdrawalRequestView>('GET', `/v1/withdrawal-requests/${encodeURIComponent(id)}`, { token }),
    /** A single-use ticket for one connection to the event stream (EventSource cannot send headers). */
    eventTicket: (token: string) => call<EventStreamTicket>('POST', '/v1/events/ticket', { token }),
    /** The event stream's URL with a ticket; `lastEventId`: resume after it (a new EventSource sends none). */
    eventsUrl: (ticket: string, lastEventId?: string) => `${base}/v1/events?ticket=${encodeURIComponent(ticket)}${resumeAfter(lastEventId)}`,
    /**
     * @deprecated For relays before 0.3, which give no tickets: the player's token in the URL,
     * where access logs keep it.
     */
    eventsUrlWithToken: (token: string, lastEventId?: string) => `${base}/v1/events?token=${encodeURIComponent(token)}${resumeAfter(lastEventId)}`,
  };
}

export type RelayClient = ReturnType<typeof createRelayClient>;
