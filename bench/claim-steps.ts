// The cost table: each step of a claim on the relay's own request path, timed alone, in µs per
// operation (the median of several batches). What the relay spends per reward beyond the
// pass-through (which makes the same two calls to the service over the same HTTP stack) is the
// sum of these, plus what they make the collector do.
// `node --import tsx bench/claim-steps.ts` (seconds); `npm run bench` prints it too.

import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { getRequestListener } from '@hono/node-server';
import { Context, Hono, type MiddlewareHandler } from 'hono';
import sonicBoom from 'sonic-boom';
import { pathOf } from '../src/node/start-server.js';
import { createCatalog } from '../src/relay/core/catalog.js';
import { createClaims } from '../src/relay/core/claims.js';
import { createEventHub } from '../src/relay/core/live-events.js';
import { createPayouts } from '../src/relay/core/payouts.js';
import { createPlayerTokens } from '../src/relay/core/player-tokens.js';
import type { LedgerEntry } from '../src/relay/core/ports/ledger.js';
import { toRewardRecord } from '../src/relay/core/reward-record.js';
import { createSettlements } from '../src/relay/core/settlements.js';
import { uuid7 } from '../src/relay/core/uuid7.js';
import { openOutgoing, setAnswerHeader } from '../src/relay/http/answer-headers.js';
import { idempotencyKeyOf, parseJsonObject, type RelayContext, type RelayEnv, readJson, requirePlayer } from '../src/relay/http/context.js';
import { methodCheck } from '../src/relay/http/middleware/allowed-methods.js';
import { corsCheck } from '../src/relay/http/middleware/cors.js';
import { callerKey, door } from '../src/relay/http/middleware/door.js';
import { refuseNul } from '../src/relay/http/middleware/nul-guard.js';
import { createRateLimiter } from '../src/relay/http/middleware/rate-limit.js';
import { httpSettings } from '../src/relay/http/options.js';
import { claimSchema } from '../src/relay/http/routes/rewards.js';
import { SECURITY_HEADERS } from '../src/relay/http/security-headers.js';
import { createRelay } from '../src/relay/index.js';
import { createLogger } from '../src/relay/ops/logger.js';
import { createMetrics } from '../src/relay/ops/metrics.js';
import type { PaymentsClient } from '../src/relay/payments/client.js';
import { scrub } from '../src/relay/scrub.js';
import { nodeSideSteps } from './http-steps.js';
import { memoryStore } from './memory-store.js';

export interface StepLine {
  step: string;
  us: number;
  /** Where the step lives, or what it stands for. */
  what: string;
}

const BATCHES = 5;

/** CPU µs this process has used (every thread: the collector's too). Not wall time: on a machine shared with other work, time spent waiting for a core is not the step's. */
const cpuNow = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** CPU µs per call of `fn`, the median of BATCHES batches of `ops` calls, after a warm-up. Awaited only when it returns a promise. */
async function time(fn: () => unknown, ops = 4000): Promise<number> {
  const run = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = fn();
      if (r instanceof Promise) await r;
    }
  };
  await run(ops);
  const samples: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const t0 = cpuNow();
    await run(ops);
    samples.push((cpuNow() - t0) / ops);
  }
  samples.sort((a, b) => a - b);
  return samples[BATCHES >> 1]!;
}

/**
 * µs per call that `fn` takes beyond `base`: batches of the two in turns, the median of the
 * batches' differences (a busy machine moves both alike).
 */
async function timeBeyond(fn: () => unknown, base: () => unknown, ops = 4000): Promise<number> {
  const diffs: number[] = [];
  for (let b = 0; b < BATCHES; b++) diffs.push((await time(fn, ops)) - (await time(base, ops)));
  diffs.sort((a, b) => a - b);
  return Math.max(0, diffs[BATCHES >> 1]!);
}

/** A sink for log lines: what pino writes costs the relay; where it goes (a pipe, a file) is the system's. */
const nowhere = () => ({ write: (_line: string) => undefined });

const SECRET = 'bench-secret-0123456789abcdef0123456789abcdef';
const API_KEY = 'bench-api-key-0123456789abcdef';

export async function claimSteps(): Promise<StepLine[]> {
  // As under Node: @hono/node-server puts its light Request and Response in the globals' place
  // (a Response built with headers costs several times less than undici's).
  getRequestListener(() => new Response(null));
  const lines: StepLine[] = [];
  const add = (step: string, us: number, what: string) => lines.push({ step, us, what });

  // The request as autocannon sends it, and as @hono/node-server hands it to the relay (a Request).
  const tokens = createPlayerTokens(SECRET, 86_400_000);
  const { token } = tokens.issue('user-1', 'bench');
  const url = 'http://127.0.0.1:3000/v1/rewards';
  const body = '{"achievementId":"bench"}';
  const rawHeaders: Array<[string, string]> = [
    ['host', '127.0.0.1:3000'],
    ['connection', 'keep-alive'],
    ['content-type', 'application/json'],
    ['authorization', `Bearer ${token}`],
    ['idempotency-key', randomUUID()],
    ['content-length', String(body.length)],
  ];
  const headersRequest = new Request(url, { method: 'POST', headers: rawHeaders });
  const env = { incoming: { socket: { remoteAddress: '127.0.0.1' } } };
  const settings = httpSettings({ rateLimitPerMinute: 0 });
  const logger = createLogger('info', nowhere(), [API_KEY]);

  // --- the door: Hono and each middleware, timed in an app of its own, less the bare app ---
  const appWith = (...mws: MiddlewareHandler<RelayEnv>[]) => {
    const app = new Hono<RelayEnv>();
    for (const mw of mws) app.use('*', mw);
    app.post('/v1/rewards', (c) => c.body(null, 201));
    return (req = headersRequest) => app.fetch(req, env as never);
  };
  add("the Node shell's path (pathOf)", await time(() => pathOf(url)), 'src/node/start-server.ts: sandbox or relay (was new URL: 1.9 µs)');
  add('headers from the socket (first header read)', await time(() => new Headers(rawHeaders)), '@hono/node-server builds them on the first c.req.header()');
  const bareApp = appWith();
  add('Hono: route and answer (an app with no middleware)', await time(bareApp), 'hono: context, router, compose, c.body');
  const mw = async (name: string, what: string, ...m: MiddlewareHandler<RelayEnv>[]) => add(name, await timeBeyond(appWith(...m), bareApp, 1000), what);
  // Each concern of the door alone, as a layer of its own (the relay runs them in one, the row after them).
  const layer =
    (check: (c: RelayContext) => unknown): MiddlewareHandler<RelayEnv> =>
    async (c, next) => {
      const answered = check(c);
      if (answered instanceof Response) return answered;
      await next();
    };
  const keyOf = callerKey(settings, logger);
  const securityHeaders = layer((c) => {
    const outgoing = openOutgoing(c);
    for (const [name, value] of SECURITY_HEADERS) setAnswerHeader(c, name, value, undefined, outgoing);
    c.set('clientKey', keyOf(c));
  });
  await mw('securityHeaders (headers, client key)', 'http/middleware/door.ts', securityHeaders);
  const metrics = createMetrics({ needsReview: async () => 0, budgetUsedSats: async () => 0 });
  await mw('metrics: requests by route and status', 'ops/metrics.ts httpRequests (prom-client; with the operator surface)', metrics.httpRequests());
  const cors = corsCheck([], logger);
  await mw(
    'cors (no Origin)',
    'http/middleware/cors.ts',
    layer((c) => cors(c, c.req.path)),
  );
  // The allowed-methods table is read from the app's routes: one as long as the relay's.
  const routed = new Hono<RelayEnv>();
  const allowedMethod = methodCheck(routed as never);
  routed.use(
    '*',
    layer((c) => allowedMethod(c, c.req.path)),
  );
  for (const path of RELAY_ROUTES) path === '/v1/rewards' ? routed.post(path, (c) => c.body(null, 201)) : routed.get(path, (c) => c.body(null));
  add('allowedMethods (the relay routes)', await timeBeyond(() => routed.fetch(headersRequest, env as never), bareApp, 1000), 'http/middleware/allowed-methods.ts');
  await mw('refuseNulInUrl', 'http/middleware/nul-guard.ts', layer(refuseNul));
  const bodyLimit = layer((c) => {
    c.set('maxBodyBytes', settings.maxBodyBytes);
    if (settings.bodyTimeoutMs) c.set('bodyTimeoutMs', settings.bodyTimeoutMs);
  });
  await mw('bodyLimit', 'http/middleware/door.ts', bodyLimit);
  // As the relay runs them: the five rows above called in turn by one middleware (metrics apart).
  const doored = new Hono<RelayEnv>();
  doored.use('*', door(settings, logger, doored as never));
  for (const path of RELAY_ROUTES) path === '/v1/rewards' ? doored.post(path, (c) => c.body(null, 201)) : doored.get(path, (c) => c.body(null));
  add(
    'the door: those five in one layer',
    await timeBeyond(() => doored.fetch(headersRequest, env as never), bareApp, 1000),
    'http/middleware/door.ts door (as the relay runs it)',
  );
  const limiterOff = createRateLimiter(0);
  const setKey: MiddlewareHandler<RelayEnv> = async (c, next) => {
    c.set('clientKey', '127.0.0.1');
    await next();
  };
  const keyed = appWith(setKey);
  add('requirePlayer (token cached, limits off)', await timeBeyond(appWith(setKey, requirePlayer(tokens, limiterOff)), keyed, 1000), 'http/context.ts, core/player-tokens.ts');
  const limiterOn = createRateLimiter(1e9);
  add('  the same with rate limits on', await timeBeyond(appWith(setKey, requirePlayer(tokens, limiterOn)), keyed, 1000), 'http/middleware/rate-limit.ts (two keys)');
  let n = 0;
  // Each token once: a token seen before is remembered.
  const fresh = Array.from({ length: (BATCHES + 1) * 500 }, (_, i) => tokens.issue(`user-${i}`, `g${i}`).token);
  add('  a token not seen before (HMAC)', await time(() => tokens.verify(fresh[n++]!), 500), 'core/player-tokens.ts check()');

  // --- the claim's own route: key, body, rules, record, answer ---
  const key = rawHeaders[4]![1];
  add('idempotency key', await time(() => idempotencyKeyOf(key)), 'http/context.ts idempotencyKeyOf');
  // The body as @hono/node-server serves it: text() straight from the socket, here already come.
  const headers = new Headers(rawHeaders);
  const lightRequest = () => ({ method: 'POST', url, headers, text: () => Promise.resolve(body) }) as unknown as Request;
  const contextOf = () => {
    const c = new Context(lightRequest(), { env, path: '/v1/rewards' }) as unknown as RelayContext;
    c.set('maxBodyBytes', 4096);
    return c;
  };
  const readOnly = await time(() => contextOf().req.text());
  add(
    'body: read, parse and validate (less the read)',
    (await time(() => readJson(contextOf(), claimSchema))) - readOnly,
    'http/context.ts readJson (its deadline, type, parse, schema)',
  );
  add('  JSON.parse with the well-formed check', await time(() => parseJsonObject(body)), 'http/context.ts parseJsonObject');
  add('  JSON.parse alone', await time(() => JSON.parse(body)), 'for scale');
  const parsed = JSON.parse(body) as unknown;
  add('  zod: the claim schema', await time(() => claimSchema.safeParse(parsed)), 'http/routes/rewards.ts claimSchema');

  const catalog = createCatalog([{ id: 'bench', title: 'Bench', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }]);
  const player = tokens.verify(token)!;
  const entry: LedgerEntry = {
    id: uuid7(),
    userId: 'user-1',
    idempotencyKey: key,
    requestHash: 'h',
    achievementId: 'bench',
    sats: 1,
    state: 'sending',
    phase: 'claimed',
    createdAt: Date.now(),
  };
  const paid: LedgerEntry = { ...entry, state: 'paid', paymentId: 'tx-1', settledAt: Date.now() };
  const event = { id: 1, userId: 'user-1', type: 'reward', data: toRewardRecord(paid), createdAt: Date.now() };
  // The store answers at once, as committed: what is left is the relay's own work.
  const store = memoryStore();
  const ledger = {
    ...store.ledger,
    claim: async () => ({ kind: 'created' as const, entry: { ...paid, state: 'credited' as const } }),
    markSent: async () => true,
    settle: async () => ({ entry: paid, from: 'sending' as const, event }),
  };
  const hub = createEventHub();
  const noMetrics = { settled: () => undefined };
  const settlements = createSettlements({ ledger, publish: hub.publish, metrics: noMetrics, logger });
  const claims = createClaims({
    ledger,
    settlements: { ...settlements, claim: async () => ({ kind: 'created', entry: { ...entry } }) },
    catalog,
    payouts: { pay: async (e: LedgerEntry) => e } as never,
    limits: { userDailyCapSats: 0, dailyBudgetSats: 0, addressDailyCapSats: 0, denialCooldownHours: 0 },
  });
  const claimBody = { achievementId: 'bench' };
  add('rule decision: catalog, request hash, id, the claim', await time(() => claims(player, key, claimBody, headersRequest, '127.0.0.1')), 'core/claims.ts (store stubbed)');
  add('  uuid7', await time(() => uuid7()), 'core/uuid7.ts');
  add('record building (toRewardRecord)', await time(() => toRewardRecord(paid)), 'core/reward-record.ts');
  const answer = new Hono<RelayEnv>().post('/v1/rewards', (c) => c.json(toRewardRecord(paid), 201));
  add('the answer: c.json of the record', await timeBeyond(() => answer.fetch(headersRequest, env as never), bareApp, 1000), 'hono c.json (JSON.stringify, headers)');

  // --- after the commit: the settlement's log line, metrics, the player's stream ---
  const line = {
    event: 'settlement',
    cause: 'payout',
    rewardId: paid.id,
    userId: paid.userId,
    achievementId: paid.achievementId,
    sats: paid.sats,
    from: 'sending',
    to: 'paid',
    paymentId: 'tx-1',
  };
  add('logging: the settlement line (pino)', await time(() => logger.info(line, 'paid')), 'ops/logger.ts: pino, redaction, the scrub hook');
  const plain = createLogger('info', nowhere());
  for (const perTurn of [1, 8]) {
    add(
      perTurn === 1 ? '  the line written to a pipe, one line a turn' : `  the same, ${perTurn} lines a turn`,
      await toPipe(line, perTurn),
      "ops/logger.ts's JSON destination (sonic-boom, async): a write per batch, on libuv's pool, and its callback",
    );
  }
  add('  the scrub hook alone', await time(() => scrub(JSON.stringify(line), [API_KEY])), 'scrub.ts: secrets and credential shapes');
  add('  pino without secrets to scrub', await time(() => plain.info(line, 'paid')), 'for scale');
  add('metrics: a payout settled (prom-client)', await time(() => metrics.settled('paid', 'bench', 1, Date.now() - 20)), 'ops/metrics.ts settled (with the operator surface)');
  add('stream publish (no stream open)', await time(() => hub.publish(event)), 'core/live-events.ts');
  const listening = createEventHub();
  listening.subscribe('user-1', () => undefined);
  add('  one stream open', await time(() => listening.publish(event)), 'core/live-events.ts');
  add(
    'settlement: apply() with the store stubbed',
    await time(() => settlements.apply(paid.id, { transition: 'settle', to: { state: 'paid', paymentId: 'tx-1' }, cause: 'payout' })),
    'core/settlements.ts: check, after() (log, publish)',
  );
  const payments = stubPayments('user-1');
  const payouts = createPayouts(ledger, settlements, payments, logger);
  add('payout: pay() with service and store stubbed', await time(() => payouts.pay(entry, 'Bench')), 'core/payouts.ts: lookup, recovery point, payment, settle');

  // --- on Node's side, which the steps above never see: over loopback, through @hono/node-server ---
  for (const l of await nodeSideSteps(token, body, toRewardRecord(paid))) lines.push(l);

  // --- the whole claim in process, and what no single step shows ---
  const relay = createRelay({ payments, store: memoryStore(), secret: SECRET, catalog, logger, rateLimitPerMinute: 0, userDailyCapSats: 0, dailyBudgetSats: 0 });
  await relay.ready;
  const relayToken = (await (await relay.fetch(jsonPost('http://127.0.0.1/v1/players', '{"gamertag":"bench"}'), env)).json()) as { token: string };
  const claimHeaders = rawHeaders.map(([k, v]): [string, string] => (k === 'authorization' ? [k, `Bearer ${relayToken.token}`] : [k, v]));
  // As @hono/node-server hands it over: headers built from the socket's, the body's text at hand.
  const claimRequest = () => {
    const h = new Headers(claimHeaders);
    h.set('idempotency-key', randomUUID());
    return { method: 'POST', url, headers: h, text: () => Promise.resolve(body) } as unknown as Request;
  };
  const collector = collectorTime();
  add('a whole claim, in process', await time(() => relay.fetch(claimRequest(), env), 1000), 'createRelay fetch: all the above, memory store, stubbed service');
  add(
    "  of which the collector's pauses",
    (await collector.stop()) / (6 * 1000),
    'perf_hooks gc entries over the same claims (one at a time: under load more is alive at each scavenge)',
  );
  await relay.close();
  return lines;
}

// CommonJS: its module.exports is the class (as in ops/logger.ts).
const SonicBoom = sonicBoom as unknown as typeof sonicBoom.SonicBoom;

/**
 * CPU µs per log line that writing it to a pipe adds (every thread of this process: the write
 * runs on libuv's pool), as the relay's JSON destination writes it: asynchronously, one write at
 * a time, the lines logged meanwhile together in the next. `perTurn` lines are logged in each
 * turn of the event loop (under load, a turn answers several claims), against the same lines to
 * nowhere. The reader is `cat` into /dev/null, as a log collector reading the relay's stdout.
 */
async function toPipe(line: object, perTurn: number, lines = 4000): Promise<number> {
  // A named pipe of this process's own (a pipe libuv holds, such as a child's stdin, is not sonic-boom's to close).
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-steps-'));
  const fifo = join(dir, 'log');
  execFileSync('mkfifo', [fifo]);
  const reader = spawn('cat', [fifo], { stdio: ['ignore', 'ignore', 'inherit'] });
  const fd = openSync(fifo, 'w');
  const out = new SonicBoom({ fd, sync: false });
  const piped = createLogger('info', { write: (l: string) => void out.write(l) }, [API_KEY]);
  const lost = createLogger('info', nowhere(), [API_KEY]);
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  // Until the last write is done and nothing waits (sonic-boom says so only in its fields).
  const state = out as unknown as { _writing: boolean; _len: number };
  const flushed = async () => {
    while (state._writing || state._len > 0) await turn();
  };
  const run = async (logger: typeof piped) => {
    const t0 = cpuNow();
    for (let i = 0; i < lines; i += perTurn) {
      for (let j = 0; j < perTurn; j++) logger.info(line, 'paid');
      await turn();
    }
    await flushed();
    return (cpuNow() - t0) / lines;
  };
  try {
    await run(piped);
    await run(lost);
    const diffs: number[] = [];
    for (let b = 0; b < BATCHES; b++) diffs.push((await run(piped)) - (await run(lost)));
    diffs.sort((a, b) => a - b);
    return Math.max(0, diffs[BATCHES >> 1]!);
  } finally {
    out.destroy();
    reader.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The collector's pauses from now on, in µs (perf_hooks' gc entries): stop() says how much and stops counting. */
function collectorTime(): { stop(): Promise<number> } {
  let ms = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) ms += e.duration;
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    async stop() {
      // Entries come in a later turn.
      await new Promise((resolve) => setTimeout(resolve, 10));
      observer.disconnect();
      return ms * 1000;
    },
  };
}

const jsonPost = (url: string, body: string) => new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

/** The service answering at once: a gamertag, a settled payment to the right user. */
function stubPayments(userId: string): PaymentsClient {
  const ok = <T>(data: T) => Promise.resolve({ kind: 'ok' as const, data });
  return {
    gamertagByUserId: () => ok({ gamertag: 'bench' }),
    sendPayment: (b) =>
      ok({ id: 'p', status: 'settled', transactionId: 'tx-1', receiverId: userId, amount: b.amount, comment: b.description ?? '', settledAt: new Date().toISOString() }),
    userIdByGamertag: () => ok({ id: userId }),
    transaction: () => Promise.resolve({ kind: 'unavailable', reason: 'stub' }),
    withdrawalRequest: () => Promise.resolve({ kind: 'unavailable', reason: 'stub' }),
    rampWidget: () => Promise.resolve({ kind: 'unavailable', reason: 'stub' }),
    wallet: () => ok(1_000_000),
    btcUsd: () => ok(65_000),
    close: () => undefined,
  } as PaymentsClient;
}

/** The relay's routes (GET stands for every method: only the table's length matters here). */
const RELAY_ROUTES = [
  '/v1/health',
  '/v1/ready',
  '/v1/catalog',
  '/v1/players',
  '/v1/players/guest',
  '/v1/rewards',
  '/v1/rewards/batch',
  '/v1/rewards/:id',
  '/v1/events',
  '/v1/events/ticket',
  '/v1/ramp-sessions',
  '/v1/withdrawal-requests/:id',
  '/v1/webhooks/payments',
  '/v1/balance',
  '/v1/withdrawals',
  '/v1/withdrawals/:id',
  '/v1/play',
  '/metrics',
  '/admin/api/reviews',
  '/admin/api/rewards/:id',
  '/admin/api/reports',
  '/admin/api/webhooks',
  '/admin',
  '/admin/app.js',
];

export function printClaimSteps(lines: StepLine[], title = 'the cost of each step of a claim on the relay, each timed alone (CPU µs per operation, the median of batches)') {
  const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 2, minimumFractionDigits: 2 });
  console.log(`${title}; load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`);
  for (const l of lines) console.log(`  ${l.step.padEnd(54)} ${fmt(l.us).padStart(8)} µs   ${l.what}`);
}

if (import.meta.url === `file://${process.argv[1]}`) printClaimSteps(await claimSteps());
