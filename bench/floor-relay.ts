// Issue 39, aim 1: the floor under the relay's own path. A claim written as one function, doing
// only what the invariants and the relay's contract make every claim do, with the relay's own
// pieces where it has them: its token check, its limiter, its payments client, its logger (the
// same scrub and redaction), its security headers and its reward record; the body checked by hand,
// the ledger two map writes. No routing but Hono's one route, no middleware, no zod, no settlement
// core. What it costs beside the pass-through (bench/own-path.ts) is what no arrangement of the
// relay's code could save; what the relay with no ledger costs beside it is the arrangement's.
// A measure, never a relay to run: no CORS, no limits by day, no review, no replays, no streams.
// `node --import tsx bench/floor-relay.ts`, with the relay's environment (as bench/own-path.ts starts it).
// FLOOR_SKIP=log,record,… leaves those steps out (a measure of what each costs, never a claim the
// relay could make): headers, limits, token, key, body, hash, log, record.

import { hash, randomUUID } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { msatsFromSats } from '../src/contract/payments-api.js';
import { loadCatalogFile } from '../src/relay/core/catalog.js';
import { createPlayerTokens } from '../src/relay/core/player-tokens.js';
import type { LedgerEntry } from '../src/relay/core/ports/ledger.js';
import { toRewardRecord } from '../src/relay/core/reward-record.js';
import { createRateLimiter } from '../src/relay/http/middleware/rate-limit.js';
import { SECURITY_HEADERS } from '../src/relay/http/security-headers.js';
import { createLogger } from '../src/relay/ops/logger.js';
import { createPaymentsClient } from '../src/relay/payments/client.js';

const env = process.env;
const apiKey = env.PAYMENTS_API_KEY ?? '';
const logger = createLogger(env.LOG_LEVEL ?? 'info', undefined, [apiKey]);
const payments = createPaymentsClient({ baseUrl: env.PAYMENTS_BASE_URL ?? '', apiKey });
const tokens = createPlayerTokens(env.RELAY_SECRET ?? '', 30 * 24 * 3600_000);
const limiter = createRateLimiter(Number(env.RELAY_RATE_LIMIT_PER_MINUTE ?? 0));
const catalog = loadCatalogFile(env.RELAY_CATALOG ?? '');
const ledger = new Map<string, LedgerEntry>();
const skip = new Set((env.FLOOR_SKIP ?? '').split(',').filter(Boolean));
let lastPlayer: { userId: string } | undefined;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const problem = (status: number, code: string) =>
  new Response(JSON.stringify({ type: `about:blank#${code}`, title: code, status }), { status, headers: { 'content-type': 'application/problem+json' } });

const app = new Hono<{ Bindings: { incoming: { socket: { remoteAddress?: string } } } }>();
app.post('/v1/players', async (c) => {
  const { gamertag } = (await c.req.json()) as { gamertag: string };
  const who = await payments.userIdByGamertag(gamertag);
  if (who.kind !== 'ok') return problem(404, 'unknown_gamertag');
  return c.json({ token: tokens.issue(who.data.id, gamertag).token }, 201);
});
app.post('/v1/rewards', async (c) => {
  if (!skip.has('headers')) for (const [name, value] of SECURITY_HEADERS) c.header(name, value);
  const address = c.env.incoming.socket.remoteAddress ?? '';
  if (!skip.has('limits') && limiter(`ip:${address}`) > 0) return problem(429, 'rate_limited');
  const auth = skip.has('token') && lastPlayer ? '' : (c.req.header('authorization') ?? '');
  const player = skip.has('token') && lastPlayer ? lastPlayer : auth.startsWith('Bearer ') ? tokens.verify(auth.slice(7)) : undefined;
  if (!player) return problem(401, 'unauthorized');
  lastPlayer = player;
  if (!skip.has('limits') && limiter(`user:${player.userId}`) > 0) return problem(429, 'rate_limited');
  const key = skip.has('key') ? randomUUID() : (c.req.header('idempotency-key') ?? '');
  if (!UUID.test(key)) return problem(400, 'idempotency_key_required');
  if (!skip.has('body') && !/^application\/json\b/i.test(c.req.header('content-type') ?? '')) return problem(415, 'unsupported_media_type');
  let body: { achievementId?: unknown } = { achievementId: 'bench' };
  if (!skip.has('body')) {
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return problem(400, 'bad_request');
    }
    if (typeof body !== 'object' || body === null || typeof body.achievementId !== 'string' || Object.keys(body).length !== 1) return problem(400, 'bad_request');
  }
  if (typeof body.achievementId !== 'string') return problem(400, 'bad_request');
  const achievement = catalog.get(body.achievementId);
  if (!achievement || typeof achievement.sats !== 'number') return problem(404, 'unknown_achievement');
  const entry: LedgerEntry = {
    id: randomUUID(),
    userId: player.userId,
    idempotencyKey: key,
    requestHash: skip.has('hash') ? '' : hash('sha256', body.achievementId, 'base64url'),
    achievementId: achievement.id,
    sats: achievement.sats,
    state: 'sending',
    createdAt: Date.now(),
  };
  ledger.set(entry.id, entry); // committed before the service is called
  const who = await payments.gamertagByUserId(player.userId);
  if (who.kind !== 'ok') return problem(503, 'service_unavailable');
  const paid = await payments.sendPayment({ gamertag: who.data.gamertag, amount: msatsFromSats(entry.sats), description: `${achievement.title} (rewardbus ${entry.id})` });
  if (paid.kind !== 'ok') return problem(503, 'service_unavailable');
  ledger.delete(entry.id); // settled: kept no longer, as the bench's memory store
  entry.state = 'paid';
  entry.paymentId = paid.data.transactionId;
  entry.settledAt = Date.now();
  if (!skip.has('log'))
    logger.info(
      {
        event: 'settlement',
        cause: 'payout',
        rewardId: entry.id,
        userId: entry.userId,
        achievementId: entry.achievementId,
        sats: entry.sats,
        from: 'sending',
        to: 'paid',
        paymentId: entry.paymentId,
      },
      'paid',
    );
  return c.json(skip.has('record') ? { status: 'paid', paymentId: entry.paymentId } : toRewardRecord(entry), 201);
});

serve({ fetch: app.fetch, port: Number(env.PORT ?? 0), hostname: '127.0.0.1' }, (info) => {
  logger.info({ url: `http://127.0.0.1:${info.port}` }, 'rewardbus relay (the floor)');
  // Past the start line the bench waits for: the level to measure at (warn: no line a claim).
  if (env.BENCH_LOG_LEVEL) logger.level = env.BENCH_LOG_LEVEL;
});
process.on('SIGTERM', () => process.exit(0));
