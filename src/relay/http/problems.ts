import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Problem } from '../../wire/relay-api.js';
import type { Refusal } from '../core/refusal.js';

/** Every error the relay answers, with its status. Codes are stable; titles are for people. */
export const PROBLEMS = {
  bad_request: [400, 'The request is malformed'],
  stale_event: [400, 'The event is too old (or too far ahead) to act on'],
  idempotency_key_required: [400, 'An Idempotency-Key header (a UUID) is required'],
  unauthorized: [401, 'A valid player token is required'],
  webhook_unauthorized: [401, "The webhook delivery is not signed with this relay's WEBHOOK_SECRET"],
  not_found: [404, 'Not found'],
  unknown_achievement: [404, 'No such achievement in the catalog'],
  referral_not_claimable: [422, 'A referral program is paid by the relay when a referral qualifies: a client never claims it'],
  unknown_gamertag: [404, 'No player has this gamertag'],
  link_refused: [403, 'The human check at link did not pass'],
  // Tournaments (docs/relay-api.md#tournaments): prizes are the game's server's to post, never a client's to claim.
  not_claimable: [403, "A tournament's prizes are posted by the game's server; a client cannot claim them"],
  unknown_tournament: [404, 'No such tournament in the catalog'],
  unknown_player: [422, 'A player in the ranking never linked with this relay'],
  duplicate_player: [422, 'A player is listed twice in the ranking'],
  results_already_posted: [409, "Other results were posted for this tournament's period"],
  // Balance mode (docs/relay-api.md#balance): a withdrawal refused changes nothing and calls no service.
  gamertag_required: [403, 'Link a gamertag first: a guest earns but cannot withdraw, and an instant payout needs a gamertag'],
  below_minimum: [422, 'A withdrawal must be at least minWithdrawalSats'],
  insufficient_balance: [409, 'The balance does not hold that many sats'],
  over_limit: [409, "The player's withdrawal limit (the day's limit or the allowance) does not reach that far yet"],
  method_not_allowed: [405, 'This path does not take that method'],
  request_in_flight: [409, 'A request with this Idempotency-Key is still being processed'],
  // An approval decided on a later UTC day than its claim: that day has no room for it; it stays held.
  daily_budget: [409, "Today's budget has no room for this claim; it stays held"],
  user_daily_cap: [409, "The player's daily cap has no room for this claim today; it stays held"],
  address_daily_cap: [409, "The address's daily cap has no room for this claim today; it stays held"],
  request_timeout: [408, 'The request (its headers or its body) did not arrive in time'],
  payload_too_large: [413, 'The request body is too large'],
  // Node's parser refuses these before the relay sees the request (src/node/start-server.ts answers it).
  headers_too_large: [431, "The request's headers are over Node's limit (16 KB)"],
  unsupported_media_type: [415, 'Send the body as application/json'],
  idempotency_key_reused: [422, 'This Idempotency-Key was used with a different request'],
  too_early: [425, 'The player has not played long enough for this achievement yet; claim it again at retryAt'],
  rate_limited: [429, 'Too many requests'],
  too_many_players: [429, 'This address linked as many players as it may today'],
  // nginx's code: the answer is for the logs and metrics; no one is left to read it.
  client_closed: [499, 'The client closed the request'],
  internal: [500, 'The relay failed'],
  link_check_unavailable: [503, 'The human check at link could not be made; try again shortly'],
  service_unavailable: [503, 'The payments service cannot be reached; try again later'],
  // Issue 38: only claims priced in dollars (or counted by a dollar budget) need a price; sats-priced claims go on.
  price_unavailable: [503, 'No BTC/USD price young enough to price this claim in dollars; try again later'],
  store_unavailable: [503, "The relay's ledger cannot be reached; try again later"],
  not_ready: [503, 'The relay cannot take requests now: its store or the payments service does not answer'],
  shutting_down: [503, 'The relay is shutting down; try another, or again shortly'],
} as const satisfies Record<string, readonly [number, string]>;

export type ProblemCode = keyof typeof PROBLEMS;

/** Headers some problems always carry (RFC 6750: a 401 names the scheme it wants). */
const PROBLEM_HEADERS: Partial<Record<ProblemCode, Record<string, string>>> = {
  unauthorized: { 'WWW-Authenticate': 'Bearer realm="rewardbus"' },
};

/** Thrown anywhere in a handler; the relay answers it as `application/problem+json`. */
export class RelayProblem extends Error {
  readonly headers: Record<string, string>;
  constructor(
    readonly code: ProblemCode,
    readonly detail?: string,
    headers: Record<string, string> = {},
    /** Members of the problem beyond the standard ones (too_early's `retryAt`). */
    readonly extra: Pick<Problem, 'retryAt'> = {},
  ) {
    super(detail ?? PROBLEMS[code][1]);
    this.headers = { ...PROBLEM_HEADERS[code], ...headers };
  }
}

/** A use case's refusal (core/refusal.ts) as the problem it is: its codes are problem codes. */
export const problemOf = (r: Refusal): RelayProblem => new RelayProblem(r.code, r.detail, r.retryAfterSeconds === undefined ? {} : { 'Retry-After': `${r.retryAfterSeconds}` });

/**
 * The problem as an answer through the request's context, so the headers middleware set before
 * the error (CORS, security) are on it too: a browser game must be able to read a 4xx.
 */
export function problemResponse(c: Context, p: RelayProblem): Response {
  const body = problemBody(p);
  // 499 is no standard status, so not in Hono's list; Node sends it as it is.
  return c.body(JSON.stringify(body), body.status as ContentfulStatusCode, { 'content-type': 'application/problem+json', ...p.headers });
}

/** The problem's RFC 9457 body (also one claim's answer in a batch). */
export function problemBody(p: RelayProblem): Problem {
  const [status, title] = PROBLEMS[p.code];
  return {
    type: `https://github.com/rewardbus/rewardbus/blob/main/docs/relay-api.md#${p.code}`,
    title,
    status,
    code: p.code,
    ...(p.detail ? { detail: p.detail } : {}),
    ...p.extra,
  };
}
