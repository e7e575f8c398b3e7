import { Hono } from 'hono';
import { z } from 'zod';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, type WithdrawalList } from '../../../wire/relay-api.js';
import { type Balances, toWithdrawalView, type WithdrawOutcome } from '../../core/balances.js';
import { clientKey, idempotencyKeyOf, type RelayEnv, readJson } from '../context.js';
import { RelayProblem } from '../problems.js';

const withdrawalSchema = z.strictObject({ sats: z.number().int().min(1).max(100_000_000).optional() });

function answerOf(r: WithdrawOutcome) {
  switch (r.kind) {
    case 'refused': {
      const b = r.balance;
      const detail = b && `Balance ${b.sats} sats, withdrawable now ${b.withdrawableSats}, minimum ${b.minWithdrawalSats}, withdrawn today ${b.withdrawnTodaySats}`;
      return new RelayProblem(r.reason, detail);
    }
    case 'key_reused':
      return new RelayProblem('idempotency_key_reused');
    case 'in_flight':
      return new RelayProblem('request_in_flight', undefined, { 'Retry-After': '1' });
    case 'deferred':
      return new RelayProblem('service_unavailable', 'Nothing was paid and the balance is whole: send the same Idempotency-Key again', { 'Retry-After': '5' });
    case 'answered':
      return r;
  }
}

/**
 * Balance mode, the player's side: `GET /v1/balance`, `POST|GET /v1/withdrawals` and the play
 * heartbeat `POST /v1/play` (every 20 s while the game is visible). Behind the player's token.
 */
export function balanceRoutes(balances: Balances) {
  const app = new Hono<RelayEnv>();
  app.get('/balance', async (c) => {
    c.header('Cache-Control', 'no-store');
    return c.json(await balances.balance(c.get('player').userId));
  });
  app.post('/withdrawals', async (c) => {
    const key = idempotencyKeyOf(c.req.header(IDEMPOTENCY_KEY_HEADER) ?? '');
    const body = c.req.header('content-length') === '0' ? {} : await readJson(c, withdrawalSchema);
    const a = answerOf(await balances.withdraw(c.get('player'), key, body, clientKey(c)));
    if (a instanceof RelayProblem) throw a;
    if (a.replayed) c.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
    return c.json(toWithdrawalView(a.entry), 201);
  });
  app.get('/withdrawals', async (c) => {
    c.header('Cache-Control', 'no-store');
    return c.json({ withdrawals: await balances.withdrawals(c.get('player').userId) } satisfies WithdrawalList);
  });
  app.post('/play', async (c) => {
    const playMs = await balances.beat(c.get('player').userId);
    return c.json({ playSeconds: Math.floor(playMs / 1000) });
  });
  return app;
}

const raiseSchema = z
  .strictObject({
    userId: z.string().min(1).max(128).optional(),
    gamertag: z.string().min(1).max(64).optional(),
    sats: z.number().int().min(1).max(100_000_000),
    reason: z.string().min(1).max(200),
  })
  .refine((r) => (r.userId === undefined) !== (r.gamertag === undefined), 'name the player by userId or by gamertag, one of them');

/**
 * `POST /v1/server/withdrawal-allowance`: the game's server raises a player's withdrawal
 * allowance on a revenue event (a validated purchase, an ad view), once per Idempotency-Key.
 * Behind RELAY_GAME_SERVER_SECRET (the bearer), never a player's token.
 */
export function allowanceRoute(balances: Balances, userIdOf: (gamertag: string) => Promise<string | undefined>) {
  return new Hono<RelayEnv>().post('/', async (c) => {
    const key = idempotencyKeyOf(c.req.header(IDEMPOTENCY_KEY_HEADER) ?? '');
    const body = await readJson(c, raiseSchema);
    const userId = body.userId ?? (await userIdOf(body.gamertag!));
    if (!userId) throw new RelayProblem('unknown_gamertag', `No player is called ${body.gamertag}`);
    const raised = await balances.raise(userId, key, body.sats, body.reason);
    if (raised === 'key_reused') throw new RelayProblem('idempotency_key_reused');
    if (raised === 'replayed') c.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
    return c.json({ userId, sats: body.sats, reason: body.reason }, 201);
  });
}
