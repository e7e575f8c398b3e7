import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freshDatabase, POSTGRES_HOW, startPostgres } from '../test/helpers/postgres.js';
import { startChild, startRelayProcess, stop } from '../test/helpers/processes.js';
import { sampleActivity, type ActivityProfile } from './pg-activity.js';
import { pgCeiling } from './pg-ceiling.js';
import { resetStatements, statementProfile, STATEMENTS_SETTINGS, type StatementLine } from './pg-statements.js';

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
  figures: LoadFigures[];
  /** pgbench on the same server: advisory lock + insert per transaction, fsync on, same clients. */
  pgCeilingTps?: number;
  /** What the PostgreSQL relay's connections were doing under its load. */
  pgActivity?: ActivityProfile;
  /** The statements that took the server's time under that load. */
  pgStatements?: StatementLine[];
}

/**
 * CPU seconds a process (all its threads) has used so far (user + system), from /proc; with
 * `mainThread`, only its main thread's (the one JavaScript runs on: its task id is the pid).
 */
function cpuSeconds(pid: number | undefined, mainThread = false): number {
  try {
    const stat = mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`;
    const fields = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds every PostgreSQL process has used so far (the postmaster and its backends). */
function postgresSeconds(): number {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') total += cpuSeconds(Number(pid));
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
}

const snapshot = (m: Metered): CpuPerReward => {
  const load = process.cpuUsage();
  return {
    server: m.server.reduce((s, c) => s + cpuSeconds(c.pid), 0),
    serverMainThread: m.server.reduce((s, c) => s + cpuSeconds(c.pid, true), 0),
    service: cpuSeconds(m.service.pid),
    database: postgresSeconds(),
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
/** Long enough for V8 to optimize what the relay runs at a few hundred requests a second. */
const WARM_UP_SECONDS = 3;
const SANDBOX_KEY = 'bench-sandbox-key';
/** The row of the relay with no ledger (bench/no-ledger-relay.ts). */
export const NO_LEDGER = 'relay, no ledger (maps in memory)';

async function load(name: string, url: string, headers: () => Record<string, string>, body: string, connections = CONNECTIONS, meter?: Metered): Promise<LoadFigures> {
  const options = {
    url,
    connections,
    method: 'POST' as const,
    body,
    requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, headers: { 'content-type': 'application/json', ...headers() } }) }],
  };
  await autocannon({ ...options, duration: WARM_UP_SECONDS }); // warm up: JIT, sockets, SQLite pages
  const before = meter && snapshot(meter);
  const r = await autocannon({ ...options, duration: SECONDS });
  const figures: LoadFigures = { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx };
  return meter && before ? metered(figures, meter, before, r.requests.total) : figures;
}

/**
 * The same load spread over several relays: their rates add up; latency is the worst of them.
 * `meter`: the CPU per reward of every process, the relays' together, over the whole load.
 */
async function loadSpread(name: string, urls: string[], headers: () => Record<string, string>, body: string, meter?: Metered): Promise<LoadFigures> {
  let before: CpuPerReward | undefined;
  // Metered from when both have warmed up (each starts measuring after its warm-up; they end together).
  const started = setTimeout(() => (before = meter && snapshot(meter)), WARM_UP_SECONDS * 1000);
  const parts = await Promise.all(urls.map((u) => load(name, u, headers, body, CONNECTIONS / urls.length)));
  clearTimeout(started);
  const total = parts.reduce((s, p) => s + p.rps, 0) * SECONDS;
  const figures: LoadFigures = {
    name,
    rps: parts.reduce((s, p) => s + p.rps, 0),
    p50: Math.max(...parts.map((p) => p.p50)),
    p99: Math.max(...parts.map((p) => p.p99)),
    errors: parts.reduce((s, p) => s + p.errors, 0),
  };
  return meter && before ? metered(figures, meter, before, total) : figures;
}

/**
 * Rewards paid per second at 64 connections: straight to the sandbox, through a pass-through
 * proxy, through the relay on SQLite, and on PostgreSQL (one relay, and two behind the same load).
 */
export async function benchRelay(options: { profileDir?: string; postgres?: boolean } = {}): Promise<RelayBench> {
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-bench-'));
  const children: ChildProcess[] = [];
  const postgres = options.postgres === false ? undefined : await startPostgres(STATEMENTS_SETTINGS).catch(() => undefined);
  try {
    const sandbox = await startChild(['src/bin/rewardbus.ts', 'sandbox', '0'], { SANDBOX_API_KEY: SANDBOX_KEY }, /sandbox on (http:\/\/\S+)/);
    children.push(sandbox.child);
    const sandboxUrl = sandbox.match[1]!;

    // The pass-through pays the same way the relay does: it looks up a userId's gamertag first.
    const benchUser = (await (await fetch(`${sandboxUrl}/v0/user-id/gamertag/bench`, { headers: { apikey: SANDBOX_KEY } })).json()) as { data: { id: string } };
    const passThrough = await startChild(['bench/pass-through.ts', '0', sandboxUrl, SANDBOX_KEY, benchUser.data.id], {}, /listening (\d+)/);
    children.push(passThrough.child);

    const catalog = join(dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({ achievements: [{ id: 'bench', title: 'Bench', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }] }));
    const secret = randomUUID() + randomUUID();
    const relayEnv = (name: string, env: Record<string, string> = {}) => ({
        PAYMENTS_API_KEY: SANDBOX_KEY,
        PAYMENTS_BASE_URL: sandboxUrl,
        RELAY_PUBLIC_URL: 'http://127.0.0.1',
        RELAY_DATA_DIR: join(dir, name),
        RELAY_SECRET: secret,
        RELAY_CATALOG: catalog,
        RELAY_USER_DAILY_CAP_SATS: '0',
        RELAY_DAILY_BUDGET_SATS: '0',
        RELAY_RATE_LIMIT_PER_MINUTE: '0',
        ...env,
      });
    const startRelay = async (name: string, env: Record<string, string> = {}, nodeArgs: string[] = []) => {
      const relay = await startRelayProcess(relayEnv(name, env), nodeArgs);
      children.push(relay.child);
      return relay;
    };
    const stopAll = async (from: number) => Promise.all(children.splice(from).map(stop));
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
    const figures = [
      await load('sandbox direct', `${sandboxUrl}/v0/gamertag/send-payment`, () => ({ apikey: SANDBOX_KEY }), payment),
      await load('two-call pass-through', `http://127.0.0.1:${passThrough.match[1]}/v1/rewards`, () => ({}), '{}', CONNECTIONS, { server: [passThrough.child], service: sandbox.child }),
    ];
    const result: RelayBench = { figures };
    // Profiled only when asked: the profiler costs the relay some of its speed.
    const sqlite = await startRelay('sqlite', {}, options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(options.profileDir, 'sqlite')}`] : []);
    const sqliteTokens = await tokensFrom(sqlite.url);
    figures.push(await load('relay (SQLite, synchronous=FULL)', `${sqlite.url}/v1/rewards`, claimHeaders(sqliteTokens), claimBody, CONNECTIONS, { server: [sqlite.child], service: sandbox.child }));
    await stopAll(2);
    // The same relay with no ledger at all: what its HTTP path and checks cost, without the store.
    const noLedger = await startRelayProcess(relayEnv('no-ledger'), [], ['bench/no-ledger-relay.ts']);
    children.push(noLedger.child);
    figures.push(await load(NO_LEDGER, `${noLedger.url}/v1/rewards`, claimHeaders(await tokensFrom(noLedger.url)), claimBody, CONNECTIONS, { server: [noLedger.child], service: sandbox.child }));
    await stopAll(2);
    if (postgres) {
      const RELAY_DATABASE_URL = await freshDatabase(postgres.url);
      const one = await startRelay('pg-1', { RELAY_DATABASE_URL }, options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(options.profileDir, 'postgres')}`] : []);
      const tokens = await tokensFrom(one.url);
      await resetStatements(RELAY_DATABASE_URL);
      // Every 100 ms: its own query costs the server about 2 ms, which the CPU figures would count.
      const activity = sampleActivity(RELAY_DATABASE_URL, 100);
      figures.push(await load('relay (PostgreSQL)', `${one.url}/v1/rewards`, claimHeaders(tokens), claimBody, CONNECTIONS, { server: [one.child], service: sandbox.child }));
      result.pgActivity = await activity.stop();
      result.pgStatements = await statementProfile(RELAY_DATABASE_URL);
      const two = await startRelay('pg-2', { RELAY_DATABASE_URL });
      figures.push(await loadSpread('2 relays (PostgreSQL)', [`${one.url}/v1/rewards`, `${two.url}/v1/rewards`], claimHeaders(tokens), claimBody, { server: [one.child, two.child], service: sandbox.child }));
      await stopAll(2);
      const ceiling = await pgCeiling(RELAY_DATABASE_URL, CONNECTIONS, SECONDS).catch(() => undefined);
      if (ceiling !== undefined) result.pgCeilingTps = ceiling;
    } else if (options.postgres !== false) {
      console.warn(`(no PostgreSQL figures: ${POSTGRES_HOW})`);
    }
    return result;
  } finally {
    await Promise.all(children.map(stop));
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
