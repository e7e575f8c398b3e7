import { spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/sandbox/index.js';
import { startTestRelay } from '../helpers/relay.js';

const children: Array<ReturnType<typeof spawn>> = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/**
 * A process logging through the relay's default destination (stdout, not a terminal): `script`
 * runs after `log` is made. `out()` is what its stdout said so far.
 */
function logging(script: string) {
  const source = `import fs from 'node:fs';\nimport { createLogger } from './src/relay/ops/logger.ts';\nconst log = createLogger('info');\n${script}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return { child, out: () => out };
}

describe('log lines on stdout', () => {
  it('are all written while the process lives, the last one too, though it came while a write was under way', async () => {
    // Behind a slow reader: every write to stdout takes 200 ms to come back, so the burst's first
    // write is still under way when the rest of the burst and the last line are logged.
    const { out } = logging(`
      const write = fs.write;
      fs.write = (fd, buf, cb) => write(fd, buf, (...a) => setTimeout(() => cb(...a), 200));
      for (let i = 0; i < 24; i++) log.info({ i, pad: 'x'.repeat(400) }, 'burst');
      setImmediate(() => log.info('the last line'));
      setInterval(() => undefined, 1000);
    `);
    // Not a deadline for speed: a line held back stays held back however long one waits.
    await expect.poll(() => out().includes('the last line'), { timeout: 5_000 }).toBe(true);
    expect(out().match(/"msg":"burst"/g)).toHaveLength(24);
  });

  it('are all written when the process exits in the same turn as it logs them', async () => {
    const { child, out } = logging(`
      for (let i = 0; i < 50; i++) log.info({ i }, 'at exit');
      process.exit(0);
    `);
    const [code] = (await once(child, 'close')) as [number];
    expect(code).toBe(0);
    expect(out().match(/"msg":"at exit"/g)).toHaveLength(50);
  });

  it('end, not the process, when their reader is gone: it still exits', async () => {
    // The last lines are logged and the process exits in the same turn, so they are still
    // unwritten (one of them being written) when the exit comes.
    const { child, out } = logging(`
      log.info('ready');
      process.on('SIGUSR2', () => {
        log.info('stopping');
        log.info('stopped');
        process.exit(0);
      });
      setInterval(() => undefined, 1000);
    `);
    // A process of its own to start (tsx): seconds on a busy machine.
    await expect.poll(() => out().includes('ready'), { timeout: 15_000 }).toBe(true);
    child.stdout!.destroy();
    const exited = once(child, 'exit');
    child.kill('SIGUSR2');
    // Before the fix it wrote to the broken pipe every 100 ms, for ever.
    const [code] = await Promise.race([exited, new Promise<[string]>((r) => setTimeout(() => r(['still running']), 5_000))]);
    expect(code).toBe(0);
  });
});

// Issue 34, finding 11: every log event the README's Troubleshooting names is one the relay
// writes in the scenario it describes. The scenarios run on a relay in this process; its log is
// the relay's own (pino's JSON lines).
describe("the README's Troubleshooting, scenario by scenario (finding 11)", () => {
  const cleanup: Array<() => unknown> = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });
  const KEY = `troubleshooting_${randomUUID()}`;
  const SECRET = randomUUID() + randomUUID();
  let serviceUrl = '';
  beforeAll(async () => {
    const sandbox = createSandbox({ apiKey: KEY });
    const service = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => service.once('listening', r));
    cleanup.push(() => service.close());
    serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  });
  const live = (env: Record<string, string> = {}) => ({
    PAYMENTS_API_KEY: KEY,
    PAYMENTS_BASE_URL: serviceUrl,
    RELAY_PUBLIC_URL: 'https://rewards.example.com',
    RELAY_SECRET: SECRET,
    ...env,
  });
  async function relayWith(env: Record<string, string>, dataDir?: string) {
    const relay = await startTestRelay(live(env), {}, dataDir);
    cleanup.push(() => relay.stop());
    return relay;
  }
  const events = (logs: string[], event: string) => logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === event);
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  /** Each event the section names, and the scenario that must write it: what the scenario's log holds. */
  const scenarios: Record<string, () => Promise<Record<string, unknown>[]>> = {
    // A browser game on an origin the relay does not allow.
    origin_refused: async () => {
      const relay = await relayWith({ RELAY_ALLOWED_ORIGINS: 'https://game.example.com' });
      await (await fetch(`${relay.url}/v1/catalog`, { headers: { origin: 'https://elsewhere.example.net' } })).body?.cancel();
      await expect.poll(() => events(relay.logs, 'origin_refused')).toHaveLength(1);
      return events(relay.logs, 'origin_refused');
    },
    // A wrong (here: revoked) API key: said once at start, once per claim, once per link.
    service_refused_key: async () => {
      const first = await relayWith({});
      const { token } = await first.link('revoked-key');
      await first.stop();
      const relay = await relayWith({ PAYMENTS_API_KEY: `revoked_${randomUUID()}` }, first.dataDir);
      // At start: its first wallet check, one line (not a second one of its own).
      await expect.poll(() => events(relay.logs, 'service_refused_key')).toHaveLength(1);
      expect(events(relay.logs, 'service_refused_key')[0]).toMatchObject({ level: 50, call: 'wallet', status: 401 });
      expect(events(relay.logs, 'wallet_check_failed')).toEqual([]);
      // Then one per claim, each answered 503 service_unavailable, nothing paid.
      for (let i = 0; i < 3; i++) expect((await relay.claim(token, { achievementId: 'first-coin' })).body).toMatchObject({ status: 503, code: 'service_unavailable' });
      const refused = events(relay.logs, 'service_refused_key');
      expect(refused.slice(1).map((l) => [l.level, l.call, l.status])).toEqual(Array.from({ length: 3 }, () => [50, 'gamertagByUserId', 401]));
      return refused;
    },
    // PAYMENTS_BASE_URL on the service's old address (here: a server that redirects everything).
    service_redirected: async () => {
      const first = await relayWith({});
      const { token } = await first.link('redirected');
      await first.stop();
      const moved = serve({ fetch: () => new Response(null, { status: 301, headers: { location: 'https://api.example.com/v0' } }), port: 0, hostname: '127.0.0.1' });
      await new Promise((r) => moved.once('listening', r));
      cleanup.push(() => moved.close());
      const relay = await relayWith({ PAYMENTS_BASE_URL: `http://127.0.0.1:${(moved.address() as AddressInfo).port}` }, first.dataDir);
      // Answered 503 service_unavailable: nothing paid, the client sends the same key again.
      expect((await relay.claim(token, { achievementId: 'first-coin' })).body).toMatchObject({ status: 503, code: 'service_unavailable' });
      const redirected = events(relay.logs, 'service_redirected').filter((l) => l.call === 'gamertagByUserId');
      expect(redirected.map((l) => [l.level, l.status, l.location])).toEqual([[50, 301, 'https://api.example.com/v0']]);
      return redirected;
    },
    // A link the service cannot answer (here: it refuses the key).
    link_failed: async () => {
      const relay = await relayWith({ PAYMENTS_API_KEY: `wrong_${randomUUID()}` });
      const r = await post(`${relay.url}/v1/players`, { gamertag: 'cannot-link' });
      expect(r.status).toBe(503);
      const failed = events(relay.logs, 'link_failed');
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ level: 40, reason: 'refused_401' });
      return failed;
    },
    // No WEBHOOK_SECRET: said at start, and at each delivery.
    webhooks_refused: async () => {
      const relay = await relayWith({});
      return events(relay.logs, 'webhooks_refused');
    },
    webhook_refused: async () => {
      const unsigned = await relayWith({});
      const secret = randomUUID();
      const signed = await relayWith({ WEBHOOK_SECRET: secret });
      const body = { id: randomUUID(), type: 'ramp.kyc.completed', data: {} };
      for (const relay of [unsigned, signed]) {
        const r = await post(`${relay.url}/v1/webhooks/payments`, body, { 'x-zbd-signature': `sha256=${'0'.repeat(64)}` });
        expect(r.status).toBe(401);
        // Titled as a webhook's refusal, not as a player's.
        expect(await r.json()).toMatchObject({ code: 'webhook_unauthorized', title: expect.stringMatching(/webhook/i) });
      }
      // A purchase whose amount is no non-negative decimal, signed: 400, and said.
      const purchase = JSON.stringify({ id: randomUUID(), type: 'ramp.purchase.completed', data: { amount: '-1.50', currency: 'usd', reference_id: 'rb_x' } });
      const r = await fetch(`${signed.url}/v1/webhooks/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-zbd-signature': `sha256=${createHmac('sha256', secret).update(purchase).digest('hex')}` },
        body: purchase,
      });
      expect([r.status, ((await r.json()) as { code: string }).code]).toEqual([400, 'bad_request']);
      const refused = [...events(unsigned.logs, 'webhook_refused'), ...events(signed.logs, 'webhook_refused')];
      expect(refused.map((l) => l.reason)).toEqual(['no_secret', 'bad_signature', 'bad_amount']);
      expect(refused[2]).toMatchObject({ level: 40, type: 'ramp.purchase.completed', amount: '"-1.50"', currency: '"usd"' });
      return refused;
    },
  };

  const section = (() => {
    const readme = readFileSync('README.md', 'utf8');
    const from = readme.indexOf('\n## Troubleshooting');
    return readme.slice(from, readme.indexOf('\n## ', from + 1));
  })();
  const named = [...new Set([...section.matchAll(/"event":"(\w+)"/g)].map((m) => m[1]!))];

  it('names its log events as {"event":"…"}, each one with a scenario here', () => {
    expect(named.length).toBeGreaterThan(0);
    expect(named.sort()).toEqual(Object.keys(scenarios).sort());
  });

  for (const event of Object.keys(scenarios))
    it(`finding 11: ${event} is in the relay's log in the scenario the README describes`, async () => {
      const lines = await scenarios[event]!();
      expect(lines.length).toBeGreaterThan(0);
      // Named in the section the way the relay writes it.
      expect(section).toContain(`"event":"${event}"`);
    });
});
