// Issue 39, aim 1, while working on it: the pass-through and the relay with no ledger (and any
// other build of it, to A/B a change) loaded in turns, a fixed number of rewards each, and the CPU
// each server's process spent per reward. Quicker than npm run bench, and only these scenarios.
// `node --import tsx bench/own-path.ts [label=entry.ts ...]` (default: the no-ledger relay here).
// OWN_REWARDS (per load, default 4000), OWN_ROUNDS (default 5), OWN_NODE_ARGS (every server's, e.g. --cpu-prof),
// OWN_RATE (requests a second offered to each, as the bench's one-rate rows; default: as fast as each goes).

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startChild, startRelayProcess, stop } from '../test/helpers/processes.js';
import { benchRelayEnv, cpuSeconds, median } from './relay-load.js';

const REWARDS = Number(process.env.OWN_REWARDS ?? 4000);
const ROUNDS = Number(process.env.OWN_ROUNDS ?? 5);
const RATE = Number(process.env.OWN_RATE ?? 0);
const NODE_ARGS = (process.env.OWN_NODE_ARGS ?? '').split(' ').filter(Boolean);
const CONNECTIONS = 64;
const KEY = 'bench-sandbox-key';
// `label=entry.ts?NAME=value&…`: that server with those settings added (e.g. BENCH_LOG_LEVEL=warn:
// the no-ledger relay and the floor start at info, whose line the bench waits for, then log at it).
const entries = (process.argv.slice(2).length ? process.argv.slice(2) : ['relay=bench/no-ledger-relay.ts']).map((a) => {
  const [name = '', spec = ''] = a.split(/=(.*)/s);
  const [entry = '', query = ''] = spec.split('?');
  return { name, entry, env: Object.fromEntries(new URLSearchParams(query)) };
});

const dir = mkdtempSync(join(tmpdir(), 'rewardbus-own-path-'));
const children: Array<{ pid?: number; kill: () => void }> = [];
try {
  const sandbox = await startChild(['src/bin/rewardbus.ts', 'sandbox', '0'], { SANDBOX_API_KEY: KEY }, /sandbox on (http:\/\/\S+)/);
  children.push(sandbox.child);
  const sandboxUrl = sandbox.match[1]!;
  const user = (await (await fetch(`${sandboxUrl}/v0/user-id/gamertag/bench`, { headers: { apikey: KEY } })).json()) as { data: { id: string } };
  const pass = await startChild(['bench/pass-through.ts', '0', sandboxUrl, KEY, user.data.id], {}, /listening (\d+)/, NODE_ARGS);
  children.push(pass.child);
  const catalog = join(dir, 'catalog.json');
  writeFileSync(catalog, JSON.stringify({ achievements: [{ id: 'bench', title: 'Bench', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }] }));
  const secret = randomUUID() + randomUUID();

  interface Target {
    name: string;
    url: string;
    pid: number;
    headers: () => Record<string, string>;
    body: string;
  }
  const targets: Target[] = [{ name: 'pass-through', url: `http://127.0.0.1:${pass.match[1]}/v1/rewards`, pid: pass.child.pid!, headers: () => ({}), body: '{}' }];
  for (const { name, entry, env } of entries) {
    const relay = await startRelayProcess({ ...benchRelayEnv({ key: KEY, sandboxUrl, dataDir: join(dir, name), secret, catalog }), ...env }, NODE_ARGS, [entry]);
    children.push(relay.child);
    const tokens = await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, i) => {
        const r = await fetch(`${relay.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag: `bench${i}` }) });
        return ((await r.json()) as { token: string }).token;
      }),
    );
    let n = 0;
    const headers = () => ({ authorization: `Bearer ${tokens[n++ % tokens.length]}`, 'idempotency-key': randomUUID() });
    targets.push({ name, url: `${relay.url}/v1/rewards`, pid: relay.child.pid!, headers, body: '{"achievementId":"bench"}' });
  }

  const run = async (t: Target, amount: number) => {
    const before = [cpuSeconds(t.pid), cpuSeconds(t.pid, { mainThread: true }), cpuSeconds(sandbox.child.pid)];
    const r = await autocannon({
      url: t.url,
      connections: CONNECTIONS,
      amount,
      ...(RATE ? { overallRate: RATE } : {}),
      method: 'POST',
      body: t.body,
      requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, headers: { 'content-type': 'application/json', ...t.headers() } }) }],
    });
    const after = [cpuSeconds(t.pid), cpuSeconds(t.pid, { mainThread: true }), cpuSeconds(sandbox.child.pid)];
    const per = (i: number) => ((after[i]! - before[i]!) * 1e6) / r.requests.total;
    return { cpu: per(0), main: per(1), service: per(2), rps: r.requests.average, errors: r.errors + r.non2xx + r.timeouts };
  };
  console.log(targets.map((t) => `${t.name} pid ${t.pid}`).join(', '));
  for (const t of targets) await run(t, REWARDS); // warm-up: JIT, sockets
  const results = new Map(targets.map((t) => [t.name, [] as Array<Awaited<ReturnType<typeof run>>>]));
  const fmt = (x: number) => x.toFixed(0).padStart(6);
  for (let round = 0; round < ROUNDS; round++) {
    const line: string[] = [];
    for (const t of round % 2 ? [...targets].reverse() : targets) {
      const r = await run(t, REWARDS);
      results.get(t.name)!.push(r);
    }
    for (const t of targets) {
      const r = results.get(t.name)![round]!;
      const p = results.get('pass-through')![round]!;
      line.push(`${t.name} ${fmt(r.cpu)} (main ${fmt(r.main)}) ${(r.cpu / p.cpu).toFixed(2)}x ${fmt(r.rps)}/s${r.errors ? ` ${r.errors} errors` : ''}`);
    }
    console.log(`round ${round + 1} (load ${loadavg()[0]!.toFixed(1)}): ${line.join('   ')}`);
  }
  console.log(`\nmedians over ${ROUNDS} rounds of ${REWARDS} rewards, CPU µs per reward of the server's process (main thread), ratio to the pass-through's in the same round`);
  const p = results.get('pass-through')!;
  for (const t of targets) {
    const rs = results.get(t.name)!;
    const ratios = rs.map((r, i) => r.cpu / p[i]!.cpu);
    const mainRatios = rs.map((r, i) => r.main / p[i]!.main);
    console.log(
      `  ${t.name.padEnd(14)} ${fmt(median(rs.map((r) => r.cpu)))} µs (main ${fmt(median(rs.map((r) => r.main)))})  ratio ${median(ratios).toFixed(2)}x (main ${median(mainRatios).toFixed(2)}x)  rounds: ${ratios.map((x) => x.toFixed(2)).join(' ')}  ${fmt(median(rs.map((r) => r.rps)))} rewards/s`,
    );
  }
} finally {
  await Promise.all(children.map((c) => stop(c as never)));
  rmSync(dir, { recursive: true, force: true });
}
