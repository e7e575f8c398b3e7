// A/B of two builds of the relay in one process, over loopback: each build's relay (memory store,
// the service answering at once) behind its own Node server, driven by raw keep-alive sockets in
// alternating batches, and the median of the batches' differences in CPU µs per claim. Between
// processes the same build differs by 10-15% under load (docs/benchmark.md); in one process an A/A
// came to 11 µs (quartiles -14 to 34 on a shared machine): run it both ways round. A build is a checkout's directory (`git archive HEAD | tar -x -C DIR` and a
// node_modules link): `node --import tsx bench/ab-builds.ts DIR_A DIR_B [connections]` (PAIRS=40).
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { type FetchHandler, loopbackClient, loopbackServer, rawPost } from './http-steps.js';

/** The build's relay on loopback, and `conns` clients of it, each expecting a paid claim. */
async function serve(fetch: FetchHandler, conns: number) {
  const { server, port } = await loopbackServer(fetch);
  const paid = (answer: string) => {
    if (!answer.startsWith('HTTP/1.1 201') || !answer.includes('"status":"paid"')) throw new Error(answer);
  };
  const clients = await Promise.all(Array.from({ length: conns }, async () => (await loopbackClient(port, paid)).roundTrip));
  return { server, clients };
}
const cpuNow = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s[s.length >> 1]!;
};

const [dirA = '.', dirB = '.', conns = '16'] = process.argv.slice(2);
const here = (dir: string) => resolve(dir);
async function build(dir: string) {
  const { createRelay } = await import(`${here(dir)}/src/relay/index.js`);
  const { createCatalog } = await import(`${here(dir)}/src/relay/core/catalog.js`);
  const { createLogger } = await import(`${here(dir)}/src/relay/ops/logger.js`);
  const { memoryStore } = await import(`${here(dir)}/bench/memory-store.js`);
  // The service knows one player: the one each relay links.
  const userId = 'bench-user';
  const ok = <T>(data: T) => Promise.resolve({ kind: 'ok' as const, data });
  const payments = {
    gamertagByUserId: () => ok({ gamertag: 'bench' }),
    sendPayment: (b: { amount: string }) =>
      ok({ id: 'p', status: 'settled', transactionId: 'tx-1', receiverId: userId, amount: b.amount, comment: '', settledAt: new Date().toISOString() }),
    userIdByGamertag: () => ok({ id: userId }),
    close: () => undefined,
  };
  const catalog = createCatalog([{ id: 'bench', title: 'Bench', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }]);
  const logger = createLogger('info', { write: (_l: string) => undefined }, ['k']);
  const relay = createRelay({
    payments,
    store: memoryStore(),
    secret: 'bench-secret-0123456789abcdef0123456789abcdef',
    catalog,
    logger,
    rateLimitPerMinute: 0,
    userDailyCapSats: 0,
    dailyBudgetSats: 0,
  });
  await relay.ready;
  const linked = (await (
    await relay.fetch(new Request('http://127.0.0.1/v1/players', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"gamertag":"bench"}' }), {})
  ).json()) as { token: string; userId: string };
  const wire = () =>
    rawPost('/v1/rewards', { 'content-type': 'application/json', authorization: `Bearer ${linked.token}`, 'idempotency-key': randomUUID() }, '{"achievementId":"bench"}');
  return { relay, wire };
}
const a = await build(dirA);
const b = await build(dirB);
const C = Number(conns);
const sa = await serve((r, e) => a.relay.fetch(r, e), C);
const sb = await serve((r, e) => b.relay.fetch(r, e), C);
const batch = async (s: typeof sa, n: number, wire = s === sa ? a.wire : b.wire) => {
  const t0 = cpuNow();
  await Promise.all(
    s.clients.map(async (send) => {
      for (let i = 0; i < n / C; i++) await send(wire());
    }),
  );
  return (cpuNow() - t0) / n;
};
await batch(sa, 3000);
await batch(sb, 3000);
const PAIRS = Number(process.env.PAIRS ?? 40);
const da: number[] = [];
const db: number[] = [];
const diffs: number[] = [];
for (let i = 0; i < PAIRS; i++) {
  const [x, y] =
    i % 2
      ? [await batch(sa, 400), await batch(sb, 400)]
      : (() => {
          return [0, 0];
        })();
  if (i % 2) {
    da.push(x);
    db.push(y);
    diffs.push(x - y);
    continue;
  }
  const y2 = await batch(sb, 400);
  const x2 = await batch(sa, 400);
  da.push(x2);
  db.push(y2);
  diffs.push(x2 - y2);
}
const sorted = [...diffs].sort((p, q) => p - q);
console.log(
  `${C} connections: A ${median(da).toFixed(1)} µs/claim, B ${median(db).toFixed(1)}; A - B median ${median(diffs).toFixed(1)} µs (quartiles ${sorted[PAIRS >> 2]!.toFixed(1)} .. ${sorted[(3 * PAIRS) >> 2]!.toFixed(1)})`,
);
for (const s of [sa, sb]) {
  s.server.closeAllConnections();
  s.server.close();
}
await a.relay.close();
await b.relay.close();
