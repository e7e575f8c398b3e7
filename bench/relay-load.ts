import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { PGBOUNCER, PGBOUNCER_HOW, startPgBouncer, type TestPgBouncer } from '../test/helpers/pgbouncer.js';
import { freshDatabase, POSTGRES_HOW, startPostgres } from '../test/helpers/postgres.js';
import { startChild, startRelayProcess, stop } from '../test/helpers/processes.js';
import { cpuSeconds, postmasterPid, serverSeconds } from './cpu.js';
import { type ActivityProfile, sampleActivity } from './pg-activity.js';
import { pgCeiling } from './pg-ceiling.js';
import { resetStatements, STATEMENTS_SETTINGS, type StatementLine, statementProfile } from './pg-statements.js';

export { cpuSeconds } from './cpu.js';

export interface LoadFigures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU the relay's process spent per reward, in µs (its own process only). */
  cpuUsPerReward?: number;
  /** CPU per reward of every process on the machine under the load, in µs. */
  cpu?: CpuPerReward;
  /** How many server processes shared the load (their main threads bound it together). */
  servers?: number;
}

/** Where a reward's CPU goes on this machine: the server under test, the service, the database, the load. */
export interface CpuPerReward {
  server: number;
  /** Of `server`, what the main threads spent: a relay's JavaScript runs on one, so one core bounds it. */
  serverMainThread: number;
  service: number;
  database: number;
  load: number;
}

export interface RelayBench {
  /** Each scenario's median over the rounds (the sandbox directly: its one load). */
  figures: LoadFigures[];
  /** Each round's figures, in the scenarios' order (the sandbox directly is not in a round). */
  rounds: LoadFigures[][];
  /** pgbench on the same server: advisory lock + insert per transaction, fsync on, same clients. */
  pgCeilingTps?: number;
  /** What the PostgreSQL relay's connections were doing under its load (the last round's). */
  pgActivity?: ActivityProfile;
  /** The statements that took the server's time under that load. */
  pgStatements?: StatementLine[];
}

/**
 * CPU seconds the bench's own PostgreSQL server has used so far (its postmaster's processes, the
 * ended backends included), and any PgBouncer's: the pooler is the database's side too (idle, it
 * costs nothing). Only the bench's server: on a shared machine other sessions' servers run beside
 * it, and every `postgres` process on the host was counted here before.
 */
function postgresSeconds(postmaster: number | undefined): number {
  let total = postmaster === undefined ? 0 : serverSeconds(postmaster);
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'pgbouncer') total += cpuSeconds(Number(pid), { reaped: true });
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** What to meter during a load: the processes of the server under test and of the service. */
interface Metered {
  server: ChildProcess[];
  service: ChildProcess;
  /** The bench's PostgreSQL server, when it has one. */
  postmaster?: number;
}

const snapshot = (m: Metered): CpuPerReward => {
  const load = process.cpuUsage();
  return {
    server: m.server.reduce((s, c) => s + cpuSeconds(c.pid), 0),
    serverMainThread: m.server.reduce((s, c) => s + cpuSeconds(c.pid, { mainThread: true }), 0),
    service: cpuSeconds(m.service.pid),
    database: postgresSeconds(m.postmaster),
    load: (load.user + load.system) / 1e6,
  };
};

/** The figures with what each process spent since the snapshot `before`, per reward of the `rewards` made. */
function metered(figures: LoadFigures, meter: Metered, before: CpuPerReward, rewards: number): LoadFigures {
  const after = snapshot(meter);
  const per = (k: keyof CpuPerReward) => ((after[k] - before[k]) * 1e6) / rewards;
  const cpu = { server: per('server'), serverMainThread: per('serverMainThread'), service: per('service'), database: per('database'), load: per('load') };
  return { ...figures, cpuUsPerReward: cpu.server, cpu, servers: meter.server.length };
}

const CONNECTIONS = 64;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
/**
 * Each scenario runs once per round, the rounds one after another, and each figure is the median
 * of its rounds: on a shared machine the host's load moves from minute to minute, and a scenario
 * measured only once could land in a slow minute and decide an aim alone.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Long enough for V8 to optimize what the relay runs at a few hundred requests a second. */
const WARM_UP_SECONDS = 3;
/** In later rounds the server is warm: enough to open the connections and fill the pipes. */
const REWARM_SECONDS = 1;
const SANDBOX_KEY = 'bench-sandbox-key';
/** The row of one relay on PostgreSQL through PgBouncer in transaction mode. */
export const POOLED = 'relay (PgBouncer, transaction)';
/** The row of the relay with no ledger (bench/no-ledger-relay.ts). */
export const NO_LEDGER = 'relay, no ledger (maps in memory)';
export const CREDITS_SQLITE = 'credits (SQLite, balance mode)';
export const CREDITS_POSTGRES = 'credits (PostgreSQL, balance)';
/** The rows of the pass-through and the relay with no ledger offered the same rate (issue 39, aim 1). */
export const PASS_AT_RATE = 'pass-through, one rate';
export const NO_LEDGER_AT_RATE = 'no ledger, one rate';
/** The floor under the relay's own path (bench/floor-relay.ts), offered the same rate. */
export const FLOOR_AT_RATE = 'the floor, one rate';
/**
 * Of the relay with no ledger's first saturated rate: the rate both are offered. Each server's CPU
 * per reward falls as its rate rises (more requests share each turn of its loop and each syscall),
 * so CPU per reward at saturation compares the pass-through at twice the relay's rate.
 */
const ONE_RATE_SHARE = 0.6;

interface Load {
  name: string;
  url: string;
  headers: () => Record<string, string>;
  body: string;
  connections?: number;
  meter?: Metered;
  warmUp?: number;
  /** Requests a second, all connections together: the load offered, not the most the server takes. */
  rate?: number;
}

async function load({ name, url, headers, body, connections = CONNECTIONS, meter, warmUp = WARM_UP_SECONDS, rate }: Load): Promise<LoadFigures> {
  const options = {
    url,
    connections,
    ...(rate ? { overallRate: rate } : {}),
    method: 'POST' as const,
    body,
    requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, headers: { 'content-type': 'application/json', ...headers() } }) }],
  };
  await autocannon({ ...options, duration: warmUp }); // warm up: JIT, sockets, SQLite pages
  const before = meter && snapshot(meter);
  const r = await autocannon({ ...options, duration: SECONDS });
  const figures: LoadFigures = { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx };
  return meter && before ? metered(figures, meter, before, r.requests.total) : figures;
}

/**
 * The same load spread over several relays: their rates add up; latency is the worst of them.
 * `meter`: the CPU per reward of every process, the relays' together, over the whole load.
 */
async function loadSpread(name: string, urls: string[], headers: () => Record<string, string>, body: string, meter: Metered, warmUp: number): Promise<LoadFigures> {
  let before: CpuPerReward | undefined;
  // Metered from when both have warmed up (each starts measuring after its warm-up; they end together).
  const started = setTimeout(() => (before = snapshot(meter)), warmUp * 1000);
  const parts = await Promise.all(urls.map((url) => load({ name, url, headers, body, connections: CONNECTIONS / urls.length, warmUp })));
  clearTimeout(started);
  const total = parts.reduce((s, p) => s + p.rps, 0) * SECONDS;
  const figures: LoadFigures = {
    name,
    rps: parts.reduce((s, p) => s + p.rps, 0),
    p50: Math.max(...parts.map((p) => p.p50)),
    p99: Math.max(...parts.map((p) => p.p99)),
    errors: parts.reduce((s, p) => s + p.errors, 0),
  };
  return before ? metered(figures, meter, before, total) : figures;
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** One scenario's rounds as one row: each figure the median of its rounds, errors their sum. */
function medianOf(rounds: LoadFigures[]): LoadFigures {
  const first = rounds[0]!;
  const of = (pick: (f: LoadFigures) => number) => median(rounds.map(pick));
  const figures: LoadFigures = { name: first.name, rps: of((f) => f.rps), p50: of((f) => f.p50), p99: of((f) => f.p99), errors: rounds.reduce((s, f) => s + f.errors, 0) };
  if (!first.cpu) return figures;
  const cpu = Object.fromEntries((Object.keys(first.cpu) as Array<keyof CpuPerReward>).map((k) => [k, of((f) => f.cpu?.[k] ?? 0)])) as unknown as CpuPerReward;
  return { ...figures, cpu, cpuUsPerReward: cpu.server, ...(first.servers ? { servers: first.servers } : {}) };
}

/** A relay's settings under the bench: paying through the sandbox with no cap, budget or rate limit. */
export const benchRelayEnv = (o: { key: string; sandboxUrl: string; dataDir: string; secret: string; catalog: string }): Record<string, string> => ({
  PAYMENTS_API_KEY: o.key,
  PAYMENTS_BASE_URL: o.sandboxUrl,
  RELAY_PUBLIC_URL: 'http://127.0.0.1',
  RELAY_DATA_DIR: o.dataDir,
  RELAY_SECRET: o.secret,
  RELAY_CATALOG: o.catalog,
  RELAY_USER_DAILY_CAP_SATS: '0',
  RELAY_DAILY_BUDGET_SATS: '0',
  RELAY_RATE_LIMIT_PER_MINUTE: '0',
});

/**
 * Rewards paid per second at 64 connections: straight to the sandbox, through a pass-through
 * proxy, through the relay on SQLite, and on PostgreSQL (one relay, and two behind the same load).
 * Every server starts first and stays up; the scenarios then take turns, round after round.
 */
export async function benchRelay(options: { profileDir?: string; postgres?: boolean; rounds?: number; only?: RegExp } = {}): Promise<RelayBench> {
  const rounds = options.rounds ?? ROUNDS;
  // Only the scenarios whose names match (a quick run while working on one; PostgreSQL's are then
  // left out, and the sandbox direct unless it matches); npm run bench runs them all.
  const wanted = (name: string) => !options.only || options.only.test(name);
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-bench-'));
  const children: ChildProcess[] = [];
  let bouncer: TestPgBouncer | undefined;
  const postgres = options.postgres === false || options.only ? undefined : await startPostgres(STATEMENTS_SETTINGS).catch(() => undefined);
  try {
    const sandbox = await startChild(['src/bin/rewardbus.ts', 'sandbox', '0'], { SANDBOX_API_KEY: SANDBOX_KEY }, /sandbox on (http:\/\/\S+)/);
    children.push(sandbox.child);
    const sandboxUrl = sandbox.match[1]!;

    // The pass-through pays the same way the relay does: it looks up a userId's gamertag first.
    const benchUser = (await (await fetch(`${sandboxUrl}/v0/user-id/gamertag/bench`, { headers: { apikey: SANDBOX_KEY } })).json()) as { data: { id: string } };
    // Profiled only when asked: the profiler costs the server some of its speed.
    const profiled = (name: string) => (options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(options.profileDir, name)}`] : []);
    const passThrough = await startChild(['bench/pass-through.ts', '0', sandboxUrl, SANDBOX_KEY, benchUser.data.id], {}, /listening (\d+)/, profiled('pass-through'));
    children.push(passThrough.child);

    const catalog = join(dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({ achievements: [{ id: 'bench', title: 'Bench', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }] }));
    const secret = randomUUID() + randomUUID();
    const relayEnv = (name: string, env: Record<string, string> = {}) => ({
      ...benchRelayEnv({ key: SANDBOX_KEY, sandboxUrl, dataDir: join(dir, name), secret, catalog }),
      ...env,
    });
    const startRelay = async (name: string, env: Record<string, string> = {}, nodeArgs: string[] = [], entry?: string[]) => {
      const relay = await startRelayProcess(relayEnv(name, env), nodeArgs, entry);
      children.push(relay.child);
      return relay;
    };
    // One token per connection, signed with the secret every relay shares.
    const tokensFrom = (relayUrl: string) =>
      Promise.all(
        Array.from({ length: CONNECTIONS }, async (_, i) => {
          const r = await fetch(`${relayUrl}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag: `bench${i}` }) });
          return ((await r.json()) as { token: string }).token;
        }),
      );
    let n = 0;
    const claimHeaders = (tokens: string[]) => () => ({ authorization: `Bearer ${tokens[n++ % tokens.length]}`, 'idempotency-key': randomUUID() });
    const claimBody = '{"achievementId":"bench"}';
    const payment = JSON.stringify({ gamertag: 'bench', amount: '1000', description: 'direct' });
    const postmaster = postgres && (await postmasterPid(postgres.url).catch(() => void console.warn("(the database's CPU not metered: its postmaster's pid unread)")));
    const metering = (...server: ChildProcess[]): Metered => ({ server, service: sandbox.child, ...(postmaster ? { postmaster } : {}) });
    const result: RelayBench = { figures: [], rounds: [] };
    // Not an aim's term: once, for scale.
    const direct = wanted('sandbox direct')
      ? await load({ name: 'sandbox direct', url: `${sandboxUrl}/v0/gamertag/send-payment`, headers: () => ({ apikey: SANDBOX_KEY }), body: payment })
      : undefined;

    // A round runs each aim's two terms one after the other (pass-through, SQLite, PostgreSQL,
    // two relays), so a ratio within a round is of figures seconds apart.
    const scenarios: Array<(warmUp: number, lastRound: boolean) => Promise<LoadFigures>> = [];
    /** The one PostgreSQL relay's scenario and the two relays': run in turn first, round after round. */
    let pair: [number, number] | undefined;
    /** A relay's claims as a load: each connection its own player, each request a new key. */
    const claimLoad = async (name: string, relay: { url: string; child: ChildProcess }) => ({
      name,
      url: `${relay.url}/v1/rewards`,
      headers: claimHeaders(await tokensFrom(relay.url)),
      body: claimBody,
      meter: metering(relay.child),
    });
    const pass = { name: 'two-call pass-through', url: `http://127.0.0.1:${passThrough.match[1]}/v1/rewards`, headers: () => ({}), body: '{}', meter: metering(passThrough.child) };
    if (wanted(pass.name)) scenarios.push((warmUp) => load({ ...pass, warmUp }));
    const SQLITE = 'relay (SQLite, synchronous=FULL)';
    if (wanted(SQLITE)) {
      const sqlite = await startRelay('sqlite', {}, profiled('sqlite'));
      const sqliteLoad = await claimLoad(SQLITE, sqlite);
      scenarios.push((warmUp) => load({ ...sqliteLoad, warmUp }));
    }
    // Balance mode: the same claims credited to a balance, no call to the service (issue 36).
    if (wanted(CREDITS_SQLITE)) {
      const credits = await startRelay('credits', { RELAY_PAYOUT_MODE: 'balance' }, profiled('credits'));
      const creditsLoad = await claimLoad(CREDITS_SQLITE, credits);
      scenarios.push((warmUp) => load({ ...creditsLoad, warmUp }));
    }
    let databaseUrl: string | undefined;
    if (postgres) {
      const RELAY_DATABASE_URL = await freshDatabase(postgres.url);
      databaseUrl = RELAY_DATABASE_URL;
      // Named apart, so the activity read is of the first relay's connections only.
      const one = await startRelay('pg-1', { RELAY_DATABASE_URL, PGAPPNAME: 'bench-relay-1' }, profiled('postgres'));
      const two = await startRelay('pg-2', { RELAY_DATABASE_URL, PGAPPNAME: 'bench-relay-2' });
      const headers = claimHeaders(await tokensFrom(one.url));
      const oneLoad = { name: 'relay (PostgreSQL)', url: `${one.url}/v1/rewards`, headers, body: claimBody, meter: metering(one.child) };
      scenarios.push(async (warmUp, lastRound) => {
        if (!lastRound) return load({ ...oneLoad, warmUp });
        // The connections' activity and the statements, read in the last round only. Sampled every
        // 100 ms: its own query costs the server about 2 ms, which the CPU figures would count.
        await resetStatements(RELAY_DATABASE_URL);
        const activity = sampleActivity(RELAY_DATABASE_URL, 100, 'bench-relay-1');
        const figures = await load({ ...oneLoad, warmUp });
        result.pgActivity = await activity.stop();
        result.pgStatements = await statementProfile(RELAY_DATABASE_URL);
        return figures;
      });
      // Two relays over the same database, right after the one relay (the aim's two terms seconds
      // apart, and in turn first: see the rounds below).
      const urls = [`${one.url}/v1/rewards`, `${two.url}/v1/rewards`];
      pair = [scenarios.length - 1, scenarios.length];
      scenarios.push((warmUp) => loadSpread('2 relays (PostgreSQL)', urls, headers, claimBody, metering(one.child, two.child), warmUp));
      // One relay through PgBouncer in transaction mode (stock settings, its default pool of 20 server
      // connections), its listen connection direct: what the pooler costs against the relay above.
      if (PGBOUNCER) {
        bouncer = await startPgBouncer(postgres.url);
        const pooled = await startRelay('pg-pooled', { RELAY_DATABASE_URL: bouncer.through(RELAY_DATABASE_URL), RELAY_DATABASE_LISTEN_URL: RELAY_DATABASE_URL });
        const pooledLoad = { name: POOLED, url: `${pooled.url}/v1/rewards`, headers, body: claimBody, meter: metering(pooled.child) };
        scenarios.push((warmUp) => load({ ...pooledLoad, warmUp }));
      } else console.warn(`(no figures through PgBouncer: ${PGBOUNCER_HOW})`);
      const pgCredits = await startRelay('pg-credits', { RELAY_DATABASE_URL: await freshDatabase(postgres.url), RELAY_PAYOUT_MODE: 'balance' });
      const pgCreditsLoad = { name: CREDITS_POSTGRES, url: `${pgCredits.url}/v1/rewards`, headers, body: claimBody, meter: metering(pgCredits.child) };
      scenarios.push((warmUp) => load({ ...pgCreditsLoad, warmUp }));
    } else if (options.postgres !== false && !options.only) {
      console.warn(`(no PostgreSQL figures: ${POSTGRES_HOW})`);
    }
    // The same relay with no ledger at all: what its HTTP path and checks cost, without the store.
    // Not an aim's term, so last in the round.
    if (wanted(NO_LEDGER)) {
      const noLedger = await startRelay('no-ledger', {}, profiled('no-ledger'), ['bench/no-ledger-relay.ts']);
      const noLedgerLoad = await claimLoad(NO_LEDGER, noLedger);
      let oneRate: number | undefined;
      scenarios.push(async (warmUp) => {
        const figures = await load({ ...noLedgerLoad, warmUp });
        oneRate ??= Math.round(ONE_RATE_SHARE * figures.rps);
        return figures;
      });
      // Aim 1's CPU per reward with both offered the same rate, right after the no-ledger relay's
      // first saturated turn set it (both kept warm: only the first round warms them up at length).
      if (wanted(PASS_AT_RATE)) {
        scenarios.push((warmUp) => load({ ...pass, name: PASS_AT_RATE, warmUp, rate: oneRate! }));
        scenarios.push((warmUp) => load({ ...noLedgerLoad, name: NO_LEDGER_AT_RATE, warmUp, rate: oneRate! }));
        // What a claim must cost whatever the relay's code is made of: the bound aim 1 works under.
        const floor = await startRelay('floor', {}, profiled('floor'), ['bench/floor-relay.ts']);
        const floorLoad = await claimLoad(FLOOR_AT_RATE, floor);
        scenarios.push((warmUp) => load({ ...floorLoad, warmUp, rate: oneRate! }));
      }
    }

    for (let r = 0; r < rounds; r++) {
      const round: LoadFigures[] = [];
      // The two relays' turn always came after the one relay's, on a ledger the one relay had just
      // grown and in the minute autovacuum was likeliest to come round to it: in odd rounds they
      // swap, so neither term of the aim is always the second. Each figure keeps its column.
      const order = scenarios.map((_, i) => i);
      if (pair && r % 2) [order[pair[0]], order[pair[1]]] = [pair[1], pair[0]];
      for (const i of order) round[i] = await scenarios[i]!(r === 0 ? WARM_UP_SECONDS : REWARM_SECONDS, r === rounds - 1);
      result.rounds.push(round);
    }
    result.figures = [...(direct ? [direct] : []), ...scenarios.map((_, i) => medianOf(result.rounds.map((round) => round[i]!)))];
    if (databaseUrl) {
      const ceiling = await pgCeiling(databaseUrl, CONNECTIONS, SECONDS).catch(() => undefined);
      if (ceiling !== undefined) result.pgCeilingTps = ceiling;
    }
    return result;
  } finally {
    await Promise.all(children.map(stop));
    await bouncer?.stop();
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
