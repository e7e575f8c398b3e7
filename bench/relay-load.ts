import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freshDatabase, POSTGRES_HOW, startPostgres } from '../test/helpers/postgres.js';
import { startChild, startRelayProcess, stop } from '../test/helpers/processes.js';
import { sampleActivity, type ActivityProfile } from './pg-activity.js';
import { pgCeiling } from './pg-ceiling.js';

export interface LoadFigures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU seconds the relay's process spent per reward, in µs (its own process only). */
  cpuUsPerReward?: number;
}

export interface RelayBench {
  figures: LoadFigures[];
  /** pgbench on the same server: advisory lock + insert per transaction, fsync on, same clients. */
  pgCeilingTps?: number;
  /** What the PostgreSQL relay's connections were doing under its load. */
  pgActivity?: ActivityProfile;
}

/** CPU seconds a process has used so far (user + system), from /proc. */
function cpuSeconds(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** The load, and the CPU the relay's process spent on it. */
async function measured(child: ChildProcess, run: () => Promise<LoadFigures>): Promise<LoadFigures> {
  const before = cpuSeconds(child.pid);
  const f = await run();
  const after = cpuSeconds(child.pid);
  // The load ran for its seconds plus a one-second warm-up; only the measured part counts.
  return before === undefined || after === undefined ? f : { ...f, cpuUsPerReward: ((after - before) * 1e6) / (f.rps * (SECONDS + 1)) };
}

const CONNECTIONS = 64;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const SANDBOX_KEY = 'bench-sandbox-key';

async function load(name: string, url: string, headers: () => Record<string, string>, body: string, connections = CONNECTIONS): Promise<LoadFigures> {
  const options = {
    url,
    connections,
    method: 'POST' as const,
    body,
    requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, headers: { 'content-type': 'application/json', ...headers() } }) }],
  };
  await autocannon({ ...options, duration: 1 }); // warm up: JIT, sockets, SQLite pages
  const r = await autocannon({ ...options, duration: SECONDS });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx };
}

/** The same load spread over several relays: their rates add up; latency is the worst of them. */
async function loadSpread(name: string, urls: string[], headers: () => Record<string, string>, body: string): Promise<LoadFigures> {
  const parts = await Promise.all(urls.map((u) => load(name, u, headers, body, CONNECTIONS / urls.length)));
  return {
    name,
    rps: parts.reduce((s, p) => s + p.rps, 0),
    p50: Math.max(...parts.map((p) => p.p50)),
    p99: Math.max(...parts.map((p) => p.p99)),
    errors: parts.reduce((s, p) => s + p.errors, 0),
  };
}

/**
 * Rewards paid per second at 64 connections: straight to the sandbox, through a pass-through
 * proxy, through the relay on SQLite, and on PostgreSQL (one relay, and two behind the same load).
 */
export async function benchRelay(options: { profileDir?: string; postgres?: boolean } = {}): Promise<RelayBench> {
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-bench-'));
  const children: ChildProcess[] = [];
  const postgres = options.postgres === false ? undefined : await startPostgres().catch(() => undefined);
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
    const startRelay = async (name: string, env: Record<string, string> = {}, nodeArgs: string[] = []) => {
      const relay = await startRelayProcess({
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
      }, nodeArgs);
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
      await measured(passThrough.child, () => load('two-call pass-through', `http://127.0.0.1:${passThrough.match[1]}/v1/rewards`, () => ({}), '{}')),
    ];
    const result: RelayBench = { figures };
    // Profiled only when asked: the profiler costs the relay some of its speed.
    const sqlite = await startRelay('sqlite', {}, options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(options.profileDir, 'sqlite')}`] : []);
    figures.push(await measured(sqlite.child, async () => load('relay (SQLite, synchronous=FULL)', `${sqlite.url}/v1/rewards`, claimHeaders(await tokensFrom(sqlite.url)), claimBody)));
    await stopAll(2);
    if (postgres) {
      const RELAY_DATABASE_URL = await freshDatabase(postgres.url);
      const one = await startRelay('pg-1', { RELAY_DATABASE_URL }, options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(options.profileDir, 'postgres')}`] : []);
      const tokens = await tokensFrom(one.url);
      const activity = sampleActivity(RELAY_DATABASE_URL);
      figures.push(await measured(one.child, () => load('relay (PostgreSQL)', `${one.url}/v1/rewards`, claimHeaders(tokens), claimBody)));
      result.pgActivity = await activity.stop();
      const two = await startRelay('pg-2', { RELAY_DATABASE_URL });
      figures.push(await loadSpread('2 relays (PostgreSQL)', [`${one.url}/v1/rewards`, `${two.url}/v1/rewards`], claimHeaders(tokens), claimBody));
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
