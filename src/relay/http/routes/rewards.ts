import { createHash } from 'node:crypto';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import { z } from 'zod';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, type RewardClaim, type RewardHistory, type RewardRecord } from '../../../wire/relay-api.js';
import type { Catalog } from '../../core/catalog.js';
import { readJson, type RelayContext, type RelayEnv } from '../context.js';
import type { EventHub } from '../../core/live-events.js';
import type { EventLog } from '../../store/event-log.js';
import type { ClaimLimits, Ledger, LedgerEntry } from '../../store/ledger.js';
import type { Metrics } from '../../ops/metrics.js';
import type { Payouts } from '../../core/payouts.js';
import type { PlayerClaims } from '../../core/player-tokens.js';
import { RelayProblem } from '../problems.js';
import { toRewardRecord } from '../../store/reward-record.js';
import { uuid7 } from '../../core/uuid7.js';

/** A game's own server-side proof: true to pay, false or a reason code to refuse. */
export type VerifyClaim = (
  claim: { achievementId: string; occurredAt?: string; userId: string; gamertag: string },
  request: Request,
) => boolean | string | Promise<boolean | string>;

// Strict: an `amount` (or anything else) in the body is refused, not silently ignored.
const claimSchema = z.strictObject({
  achievementId: z.string().min(1).max(64),
  occurredAt: z.iso.datetime({ offset: true }).optional(),
});
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const requestHash = (c: RewardClaim) => createHash('sha256').update(`${c.achievementId}\n${c.occurredAt ?? ''}`).digest('base64url');

export interface RewardsRouteDeps {
  ledger: Ledger;
  catalog: Catalog;
  payouts: Payouts;
  limits: ClaimLimits;
  logger: Logger;
  verifyClaim?: VerifyClaim | undefined;
  events: EventLog;
  hub: EventHub;
  metrics?: Pick<Metrics, 'settled'> | undefined;
}

/** `POST /v1/rewards` pays an achievement at most once per Idempotency-Key; GETs read the player's own. */
export function rewardsRoute({ ledger, catalog, payouts, limits, logger, verifyClaim, events, hub, metrics }: RewardsRouteDeps) {
  /** The player's other devices hear the outcome; stored so a reconnecting stream gets it too. */
  function announce(record: RewardRecord) {
    events.append(record.userId, 'reward', record).then(hub.publish, (err: unknown) => logger.error({ err }, 'event not stored'));
  }

  /** An intent already known under this key: replay it, or say why not. */
  function known(c: RelayContext, entry: LedgerEntry, hash: string): Response | undefined {
    if (entry.requestHash !== hash) throw new RelayProblem('idempotency_key_reused');
    if (entry.state === 'sending') throw new RelayProblem('request_in_flight', undefined, { 'Retry-After': '1' });
    if (entry.state === 'deferred') return undefined;
    // The original answer's status, with the entry as it stands now (a review may have settled it).
    c.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
    return c.json(toRewardRecord(entry), 201);
  }

  async function claim(c: RelayContext, player: PlayerClaims) {
    // The IETF draft sends the key as a structured-field string: "<uuid>". Bare is accepted too.
    const key = (c.req.header(IDEMPOTENCY_KEY_HEADER) ?? '').replace(/^"(.*)"$/, '$1');
    if (!UUID.test(key)) throw new RelayProblem('idempotency_key_required');
    const body = await readJson(c, claimSchema);
    const achievement = catalog.get(body.achievementId);
    if (!achievement) throw new RelayProblem('unknown_achievement', `No achievement ${body.achievementId}`);
    const hash = requestHash(body);

    let rejectReason: string | undefined;
    if (verifyClaim) {
      // A replay must not run the game's check again.
      const before = await ledger.find(player.userId, key);
      const replay = before && known(c, before, hash);
      if (replay) return replay;
      const verdict = await verifyClaim({ ...body, userId: player.userId, gamertag: player.gamertag }, c.req.raw);
      if (verdict !== true) rejectReason = typeof verdict === 'string' ? verdict : 'claim_not_verified';
    }
    const result = await ledger.claim(
      {
        id: uuid7(),
        userId: player.userId,
        idempotencyKey: key,
        requestHash: hash,
        achievementId: achievement.id,
        sats: achievement.sats,
        repeat: achievement.repeat,
        ...(body.occurredAt ? { occurredAt: body.occurredAt } : {}),
        ...(rejectReason ? { rejectReason } : {}),
      },
      limits,
    );
    if (result.kind === 'existing') return known(c, result.entry, hash) ?? c.json(toRewardRecord(result.entry), 201);

    let entry = result.entry;
    if (entry.state === 'rejected') {
      logger.info({ event: 'refusal', rewardId: entry.id, userId: entry.userId, achievementId: entry.achievementId, reason: entry.reason });
      metrics?.settled('rejected', entry.achievementId, entry.sats);
    } else {
      entry = await payouts.pay(entry, achievement.title);
    }
    // Nothing was paid and the service was out of reach: the client retries with the same key.
    if (entry.state === 'deferred') throw new RelayProblem('service_unavailable', undefined, { 'Retry-After': '5' });
    const record = toRewardRecord(entry);
    announce(record);
    return c.json(record, 201);
  }

  return new Hono<RelayEnv>()
    .post('/', (c) => claim(c, c.get('player')))
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
