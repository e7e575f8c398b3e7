import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startChild, stop } from './processes.js';

export interface LoadFigures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

const CONNECTIONS = 64;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const SANDBOX_KEY = 'bench-sandbox-key';

async function load(name: string, url: string, headers: () => Record<string, string>, body: string): Promise<LoadFigures> {
  const options = {
    url,
    connections: CONNECTIONS,
    method: 'POST' as const,
    body,
    requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, headers: { 'content-type': 'application/json', ...headers() } }) }],
  };
  await autocannon({ ...options, duration: 1 }); // warm up: JIT, sockets, SQLite pages
  const r = await autocannon({ ...options, duration: SECONDS });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx };
}

/** Rewards paid per second at 64 connections: straight to the sandbox, through a pass-through proxy, through the relay. */
export async function benchRelay(): Promise<LoadFigures[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-bench-'));
  const children = [];
  try {
    const sandbox = await startChild(['src/bin/rewardbus.ts', 'sandbox', '0'], { SANDBOX_API_KEY: SANDBOX_KEY }, /sandbox on (http:\/\/\S+)/);
    children.push(sandbox.child);
    const sandboxUrl = sandbox.match[1]!;

    const passThrough = await startChild(['bench/pass-through.ts', '0', sandboxUrl, SANDBOX_KEY], {}, /listening (\d+)/);
    children.push(passThrough.child);

    const catalog = join(dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({ achievements: [{ id: 'bench', title: 'Bench', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }] }));
    const relay = await startChild(
      ['src/bin/rewardbus.ts', 'start'],
      {
        PORT: '0',
        PAYMENTS_API_KEY: SANDBOX_KEY,
        PAYMENTS_BASE_URL: sandboxUrl,
        RELAY_PUBLIC_URL: 'http://127.0.0.1',
        RELAY_DATA_DIR: dir,
        RELAY_CATALOG: catalog,
        RELAY_USER_DAILY_CAP_SATS: '0',
        RELAY_DAILY_BUDGET_SATS: '0',
        RELAY_RATE_LIMIT_PER_MINUTE: '0',
      },
      /"url":"(http:\/\/[^"]+)","msg":"rewardbus relay/,
    );
    children.push(relay.child);
    const relayUrl = relay.match[1]!;

    const tokens = await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, i) => {
        const r = await fetch(`${relayUrl}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag: `bench${i}` }) });
        return ((await r.json()) as { token: string }).token;
      }),
    );
    let n = 0;
    const payment = JSON.stringify({ gamertag: 'bench', amount: '1000', description: 'direct' });
    return [
      await load('sandbox direct', `${sandboxUrl}/v0/gamertag/send-payment`, () => ({ apikey: SANDBOX_KEY }), payment),
      await load('pass-through proxy', `http://127.0.0.1:${passThrough.match[1]}/v1/rewards`, () => ({}), '{}'),
      await load('relay (SQLite, synchronous=FULL)', `${relayUrl}/v1/rewards`, () => ({ authorization: `Bearer ${tokens[n++ % tokens.length]}`, 'idempotency-key': randomUUID() }), '{"achievementId":"bench"}'),
    ];
  } finally {
    await Promise.all(children.map(stop));
    rmSync(dir, { recursive: true, force: true });
  }
}
