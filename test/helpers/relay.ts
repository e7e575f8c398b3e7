import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningServer, type ServeOptions, startServer } from '../../src/node/start-server.js';
import { createLogger, loadConfig } from '../../src/relay/index.js';
import type { PlayerSession, RewardRecord } from '../../src/wire/relay-api.js';

export interface TestRelay extends RunningServer {
  dataDir: string;
  /** Every log line the relay wrote. */
  logs: string[];
  link(gamertag: string): Promise<PlayerSession>;
  claim(token: string, body: unknown, key?: string): Promise<{ status: number; headers: Headers; body: RewardRecord & { code?: string } }>;
  /** Stops and starts again on the same data dir (a restart). */
  restart(): Promise<TestRelay>;
  stop(): Promise<void>;
}

export async function startTestRelay(env: Record<string, string> = {}, options: ServeOptions = {}, dataDir = mkdtempSync(join(tmpdir(), 'rewardbus-'))): Promise<TestRelay> {
  const logs: string[] = [];
  const logger = createLogger('debug', { write: (line: string) => void logs.push(line) });
  const config = loadConfig({
    PORT: '0',
    RELAY_DATA_DIR: dataDir,
    RELAY_RATE_LIMIT_PER_MINUTE: '0',
    ...env,
  });
  const server = await startServer(config, { logger, ...options });
  const t: TestRelay = {
    ...server,
    dataDir,
    logs,
    async link(gamertag) {
      const r = await fetch(`${server.url}/v1/players`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ gamertag }),
      });
      if (r.status !== 201) throw new Error(`link ${gamertag}: ${r.status} ${await r.text()}`);
      return (await r.json()) as PlayerSession;
    },
    async claim(token, body, key = randomUUID()) {
      const r = await fetch(`${server.url}/v1/rewards`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': key },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: r.status, headers: r.headers, body: (await r.json()) as RewardRecord & { code?: string } };
    },
    async restart() {
      await server.close({ graceMs: 0 });
      return startTestRelay(env, options, dataDir);
    },
    async stop() {
      // As before graceful shutdown: requests under way are cut at once (payments in flight still
      // settle), so a test's hanging request does not hold its hook for the whole grace.
      // test/node/graceful-shutdown.test.ts and test/deploy/ test the grace itself.
      await server.close({ graceMs: 0 });
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return t;
}
