import { Hono } from 'hono';
import type { Logger } from 'pino';
import { z } from 'zod';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  type Problem,
  type RewardClaimBatchResult,
  type RewardClaimResult,
  type RewardHistory,
  type RewardRecord,
} from '../../../wire/relay-api.js';
import type { ClaimOutcome, Claims } from '../../core/claims.js';
import type { Ledger, LedgerEntry } from '../../core/ports/ledger.js';
import { isStoreOutage } from '../../core/ports/outage.js';
import { toRewardRecord } from '../../core/reward-record.js';
import { PROOF_MAX_LENGTH } from '../../core/unlock-proof.js';
import { addressScope, clientKey, idempotencyKeyOf, type RelayContext, type RelayEnv, readJson, requestHeader } from '../context.js';
import type { RateLimiter } from '../middleware/rate-limit.js';
import { problemBody, RelayProblem } from '../problems.js';

const IDEMPOTENCY_KEY = IDEMPOTENCY_KEY_HEADER.toLowerCase();

// Strict: an `amount` (or anything else) in the body is refused, not silently ignored.
export const claimSchema = z.strictObject({
  achievementId: z.string().min(1).max(64),
  occurredAt: z.iso.datetime({ offset: true }).optional(),
  proof: z.string().min(1).max(PROOF_MAX_LENGTH).optional(),
});
const batchedClaimSchema = claimSchema.extend({ idempotencyKey: z.string() });
/** The claims one `POST /v1/rewards/batch` takes: a device back online catches up in a few requests. */
export const CLAIM_BATCH_MAX = 25;
/**
 * A batch's claims decided at once: enough for their commits to share the ledger's, few enough
 * that one device's batch holds no more of the store's connections (PostgreSQL) or the service's
 * attention than a browser's six requests did.
 */
const BATCH_CLAIMS_AT_ONCE = 6;
const batchSchema = z.strictObject({ claims: z.array(z.unknown()).min(1).max(CLAIM_BATCH_MAX) });

export interface RewardsRouteDeps {
  ledger: Ledger;
  claim: Claims;
  /** A claim's answer: the record its player was told with, when it was just settled (core/settlements.ts). */
  recordOf?: (entry: LedgerEntry) => RewardRecord;
  /** Each claim of a batch after its first counts against the player's and the address's rate limits, as its own request would. */
  limiter: RateLimiter;
  logger: Logger;
}

/** What a claim's outcome answers: the reward record (201), or the problem. */
function answerOf(r: ClaimOutcome, achievementId: string): { entry: LedgerEntry; replayed: boolean } | RelayProblem {
  switch (r.kind) {
    case 'unknown_achievement':
      return new RelayProblem('unknown_achievement', `No achievement ${achievementId}`);
    case 'not_claimable':
      return new RelayProblem('not_claimable', `${achievementId} is a tournament: its prizes are posted by the game's server`);
    case 'referral_not_claimable':
      return new RelayProblem('referral_not_claimable', `${achievementId} is a referral program: the relay pays it when a referral qualifies`);
    case 'gamertag_required':
      return new RelayProblem('gamertag_required', `${achievementId} is paid at once, to a gamertag: link one first`);
    case 'key_reused':
      return new RelayProblem('idempotency_key_reused');
    case 'in_flight':
      return new RelayProblem('request_in_flight', undefined, { 'Retry-After': '1' });
    case 'deferred':
      return new RelayProblem('service_unavailable', undefined, { 'Retry-After': '5' });
    case 'too_early': {
      const seconds = Math.max(1, Math.ceil((r.retryAt - Date.now()) / 1000));
      return new RelayProblem('too_early', undefined, { 'Retry-After': `${seconds}` }, { retryAt: new Date(r.retryAt).toISOString() });
    }
    case 'price_unavailable':
      return new RelayProblem('price_unavailable', `${achievementId} is priced in dollars and the relay holds no recent BTC/USD price`, {
        'Retry-After': `${r.retryAfterSeconds}`,
      });
    case 'answered':
      return r;
  }
}

/** `POST /v1/rewards` pays an achievement at most once per Idempotency-Key; GETs read the player's own. */
export function rewardsRoute({ ledger, claim, recordOf = toRewardRecord, limiter, logger }: RewardsRouteDeps) {
  async function post(c: RelayContext) {
    const key = idempotencyKeyOf(requestHeader(c, IDEMPOTENCY_KEY) ?? '');
    const body = await readJson(c, claimSchema);
    const a = answerOf(await claim(c.get('player'), key, body, c.req.raw, clientKey(c)), body.achievementId);
    if (a instanceof RelayProblem) throw a;
    // A replay gets the original answer's status, with the entry as it stands now.
    if (a.replayed) c.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
    return c.json(recordOf(a.entry), 201);
  }

  /**
   * Several claims of the player in one request, a few at once (their commits share the
   * ledger's), each answered as `POST /v1/rewards` would have answered it alone. A claim's own
   * mistake is its own 4xx, and a failure of the relay's on one claim is that claim's 500; only
   * a malformed envelope refuses the request.
   */
  async function postBatch(c: RelayContext) {
    // The body as 25 claims' bodies could be; each claim's fields are bounded by the claim's schema.
    const { claims } = await readJson(c, batchSchema, c.get('maxBodyBytes') * CLAIM_BATCH_MAX);
    const player = c.get('player');
    const address = clientKey(c);
    const byAddress = addressScope(c, 'ip');
    const seen = new Set<string>();
    const one = async (item: unknown, i: number): Promise<RewardClaimResult> => {
      const idempotencyKey = typeof item === 'object' && item && 'idempotencyKey' in item && typeof item.idempotencyKey === 'string' ? item.idempotencyKey : '';
      try {
        const key = idempotencyKeyOf(idempotencyKey);
        if (seen.has(key)) throw new RelayProblem('bad_request', 'This Idempotency-Key is in the batch twice');
        seen.add(key);
        const parsed = batchedClaimSchema.safeParse(item);
        if (!parsed.success) throw new RelayProblem('bad_request', parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; '));
        // The request itself took the first claim's share of the limits.
        const wait = i === 0 ? 0 : Math.max(byAddress === undefined ? 0 : limiter(byAddress), limiter(`user:${player.userId}`));
        if (wait > 0) throw new RelayProblem('rate_limited', `Try again in ${wait} s`, { 'Retry-After': `${wait}` });
        const { idempotencyKey: _, ...body } = parsed.data;
        const a = answerOf(await claim(player, key, body, c.req.raw, address), body.achievementId);
        if (a instanceof RelayProblem) throw a;
        return { idempotencyKey, status: 201, reward: recordOf(a.entry), ...(a.replayed ? { replayed: true as const } : {}) };
      } catch (err) {
        let p: RelayProblem;
        if (err instanceof RelayProblem) p = err;
        else if (isStoreOutage(err)) p = new RelayProblem('store_unavailable', undefined, { 'Retry-After': '5' });
        else {
          // As the app answers a single claim that failed so: logged, and the client sends the same key again.
          logger.error({ err, method: 'POST', path: '/v1/rewards/batch' }, 'relay error');
          p = new RelayProblem('internal');
        }
        const problem: Problem = problemBody(p);
        const retryAfter = Number(p.headers['Retry-After']);
        return { idempotencyKey, status: problem.status, problem, ...(retryAfter > 0 ? { retryAfter } : {}) };
      }
    };
    const results: RewardClaimResult[] = [];
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < claims.length; i = next++) results[i] = await one(claims[i], i);
    };
    await Promise.all(Array.from({ length: Math.min(BATCH_CLAIMS_AT_ONCE, claims.length) }, worker));
    return c.json({ results } satisfies RewardClaimBatchResult);
  }

  return new Hono<RelayEnv>()
    .post('/', post)
    .post('/batch', postBatch)
    .get('/', async (c) => {
      const limit = Math.min(Math.max(Number(c.req.query('limit')) || 100, 1), 500);
      const entries = await ledger.history(c.get('player').userId, limit);
      return c.json({ rewards: entries.map(toRewardRecord) } satisfies RewardHistory);
    })
    .get('/:id', async (c) => {
      const entry = await ledger.get(c.req.param('id'));
      // Another player's reward is as good as missing.
      if (!entry || entry.userId !== c.get('player').userId) throw new RelayProblem('not_found', 'No such reward');
      return c.json(toRewardRecord(entry));
    });
}
