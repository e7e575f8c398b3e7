import { Hono } from 'hono';
import { z } from 'zod';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, type RewardHistory } from '../../../wire/relay-api.js';
import type { Claims } from '../../core/claims.js';
import type { Ledger } from '../../store/ledger.js';
import { toRewardRecord } from '../../store/reward-record.js';
import { clientIp, readJson, type RelayContext, type RelayEnv } from '../context.js';
import { addressGroup } from '../client-address.js';
import { PROOF_MAX_LENGTH } from '../../core/unlock-proof.js';
import { RelayProblem } from '../problems.js';

// Strict: an `amount` (or anything else) in the body is refused, not silently ignored.
const claimSchema = z.strictObject({
  achievementId: z.string().min(1).max(64),
  occurredAt: z.iso.datetime({ offset: true }).optional(),
  proof: z.string().min(1).max(PROOF_MAX_LENGTH).optional(),
});
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RewardsRouteDeps {
  ledger: Ledger;
  claim: Claims;
}

/** `POST /v1/rewards` pays an achievement at most once per Idempotency-Key; GETs read the player's own. */
export function rewardsRoute({ ledger, claim }: RewardsRouteDeps) {
  async function post(c: RelayContext) {
    // The IETF draft sends the key as a structured-field string: "<uuid>". Bare is accepted too.
    const key = (c.req.header(IDEMPOTENCY_KEY_HEADER) ?? '').replace(/^"(.*)"$/, '$1');
    if (!UUID.test(key)) throw new RelayProblem('idempotency_key_required');
    const body = await readJson(c, claimSchema);
    const r = await claim(c.get('player'), key, body, c.req.raw, addressGroup(clientIp(c)));
    switch (r.kind) {
      case 'unknown_achievement':
        throw new RelayProblem('unknown_achievement', `No achievement ${body.achievementId}`);
      case 'key_reused':
        throw new RelayProblem('idempotency_key_reused');
      case 'in_flight':
        throw new RelayProblem('request_in_flight', undefined, { 'Retry-After': '1' });
      case 'deferred':
        throw new RelayProblem('service_unavailable', undefined, { 'Retry-After': '5' });
      case 'too_early': {
        const seconds = Math.max(1, Math.ceil((r.retryAt - Date.now()) / 1000));
        throw new RelayProblem('too_early', undefined, { 'Retry-After': `${seconds}` }, { retryAt: new Date(r.retryAt).toISOString() });
      }
      case 'answered':
        // A replay gets the original answer's status, with the entry as it stands now.
        if (r.replayed) c.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
        return c.json(toRewardRecord(r.entry), 201);
    }
  }

  return new Hono<RelayEnv>()
    .post('/', post)
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
