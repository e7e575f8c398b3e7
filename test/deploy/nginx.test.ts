// The deployment of docs/deploy.md, run: docs/deploy/nginx.conf (its ports and paths replaced, and
// plain HTTP on loopback: its ssl_ lines dropped; the TLS form is checked with `nginx -t` and a
// self-signed certificate) in front of two relay processes on one PostgreSQL database, paying the
// standalone sandbox as the payments service (live mode).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freshDatabase, POSTGRES_HOW } from '../helpers/postgres.js';
import { freePort, startChild, startRelayProcess, stop } from '../helpers/processes.js';
import { openSse } from '../helpers/sse.js';

const exec = promisify(execFile);
const postgresUrl = inject('postgresUrl');
// NGINX_BIN, when set, is the only one tried.
const NGINX = (process.env.NGINX_BIN ? [process.env.NGINX_BIN] : ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx']).find((p) => existsSync(p));
const NGINX_HOW = 'the deployment test needs nginx: apt-get install -y nginx (or set NGINX_BIN)';
if (!NGINX && process.env.CI === 'true') throw new Error(`CI=true: ${NGINX_HOW}`);

const SANDBOX_KEY = `deploy_${randomUUID()}`;
const SECRET = randomUUID() + randomUUID();
const DOCS_CONF = readFileSync('docs/deploy/nginx.conf', 'utf8');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  await Promise.all(children.map(stop));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `from` must be in the docs' file: a test that silently stopped replacing would test another config. */
function swap(conf: string, from: string | RegExp, to: string): string {
  const pattern = typeof from === 'string' ? from : new RegExp(from.source, 'gm');
  if (!(typeof pattern === 'string' ? conf.includes(pattern) : pattern.test(conf))) throw new Error(`docs/deploy/nginx.conf no longer has ${String(from)}`);
  if (typeof pattern !== 'string') pattern.lastIndex = 0;
  return conf.replaceAll(pattern, to);
}

/** docs/deploy/nginx.conf with this test's ports and paths: only `listen`, `server` and ssl_ lines change. */
function siteConf(o: { relays: [string, string]; port: number; redirectPort: number; tls?: { cert: string; key: string } }): string {
  let conf = swap(DOCS_CONF, 'server 127.0.0.1:8787 ', `server ${o.relays[0]} `);
  conf = swap(conf, 'server 127.0.0.1:8788 ', `server ${o.relays[1]} `);
  conf = swap(conf, /^\s*listen \[::\]:\d+.*$\n/, '');
  conf = swap(conf, 'listen 80;', `listen 127.0.0.1:${o.redirectPort};`);
  if (o.tls) {
    conf = swap(conf, 'listen 443 ssl http2;', `listen 127.0.0.1:${o.port} ssl http2;`);
    conf = swap(conf, /^(\s*ssl_certificate\s+).*$/, `$1${o.tls.cert};`);
    return swap(conf, /^(\s*ssl_certificate_key\s+).*$/, `$1${o.tls.key};`);
  }
  conf = swap(conf, 'listen 443 ssl http2;', `listen 127.0.0.1:${o.port};`);
  return swap(conf, /^\s*ssl_.*$\n/, '');
}

/** nginx's own file around the site's (what /etc/nginx/nginx.conf is): temp paths in `dir`. */
function mainConf(dir: string): string {
  const temp = (name: string) => join(dir, 'temp', name);
  return `worker_processes 1;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${temp('body')};
  proxy_temp_path ${temp('proxy')};
  fastcgi_temp_path ${temp('fastcgi')};
  uwsgi_temp_path ${temp('uwsgi')};
  scgi_temp_path ${temp('scgi')};
  include ${join(dir, 'rewardbus.conf')};
}
`;
}

/** nginx in the foreground (not a daemon), its log on stderr; as root its workers run as its default user, so `dir` is made readable. */
const nginxArgs = (dir: string) => ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', 'stderr', '-g', `daemon off; pid ${join(dir, 'nginx.pid')};`];
function writeNginx(site: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-nginx-'));
  dirs.push(dir);
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'temp'));
  writeFileSync(join(dir, 'rewardbus.conf'), site);
  writeFileSync(join(dir, 'nginx.conf'), mainConf(dir));
  return dir;
}

interface Deployment {
  sandboxUrl: string;
  /** nginx, the address games and the service use. */
  url: string;
  redirectUrl: string;
  relays: Array<{ child: ChildProcess; url: string; logs: () => string }>;
}

/** The standalone sandbox, a fresh database, two relays sharing it, nginx in front. */
async function deploy(env: Record<string, string> = {}): Promise<Deployment> {
  const sandbox = await startChild(['src/bin/rewardbus.ts', 'sandbox', '0'], { SANDBOX_API_KEY: SANDBOX_KEY }, /sandbox on (http:\/\/\S+)/);
  children.push(sandbox.child);
  const [port, redirectPort] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-deploy-'));
  dirs.push(dir);
  const catalog = join(dir, 'catalog.json');
  writeFileSync(catalog, JSON.stringify({ achievements: [{ id: 'coin', title: 'Coin', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }] }));
  const databaseUrl = await freshDatabase(postgresUrl);
  const relays = await Promise.all(
    [0, 1].map(async (i) => {
      const relay = await startRelayProcess({
        PAYMENTS_API_KEY: SANDBOX_KEY,
        PAYMENTS_BASE_URL: sandbox.match[1]!,
        RELAY_PUBLIC_URL: `http://127.0.0.1:${port}`,
        WEBHOOK_SECRET: randomUUID(),
        RELAY_DATABASE_URL: databaseUrl,
        RELAY_SECRET: SECRET,
        RELAY_TRUST_PROXY: '127.0.0.1',
        // The game is served from another origin, as in production.
        RELAY_ALLOWED_ORIGINS: 'https://game.example.com',
        RELAY_CATALOG: catalog,
        RELAY_DATA_DIR: join(dir, `relay-${i}`),
        RELAY_USER_DAILY_CAP_SATS: '0',
        RELAY_DAILY_BUDGET_SATS: '0',
        RELAY_RATE_LIMIT_PER_MINUTE: '0',
        ...env,
      });
      children.push(relay.child);
      let logs = '';
      relay.child.stdout!.on('data', (d: Buffer) => void (logs += d.toString()));
      return { ...relay, logs: () => logs };
    }),
  );
  const hostPort = (u: string) => new URL(u).host;
  const nginxDir = writeNginx(siteConf({ relays: [hostPort(relays[0]!.url), hostPort(relays[1]!.url)], port, redirectPort }));
  const nginx = spawn(NGINX!, nginxArgs(nginxDir), { stdio: ['ignore', 'ignore', 'pipe'] });
  let nginxLog = '';
  nginx.stderr!.on('data', (d: Buffer) => void (nginxLog += d.toString()));
  children.push(nginx);
  const url = `http://127.0.0.1:${port}`;
  // Until nginx answers (expect.poll is for tests; this runs in beforeAll too).
  for (const deadline = Date.now() + 10_000; (await fetch(`${url}/v1/health`).catch(() => undefined))?.status !== 200; await sleep(50)) {
    if (nginx.exitCode !== null || Date.now() > deadline) throw new Error(`nginx did not start: ${nginxLog}`);
  }
  return { sandboxUrl: sandbox.match[1]!, url, redirectUrl: `http://127.0.0.1:${redirectPort}`, relays };
}

/** A request from a chosen loopback address (Linux answers on all of 127/8), as another client machine would come. */
function from(localAddress: string, url: string, body: unknown, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = request(url, { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': String(data.length), ...headers } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode!));
    });
    req.once('error', reject);
    req.end(data);
  });
}

async function link(url: string, gamertag: string): Promise<{ token: string; userId: string }> {
  const r = await fetch(`${url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag }) });
  if (r.status !== 201) throw new Error(`link ${gamertag}: ${r.status} ${await r.text()}`);
  return (await r.json()) as { token: string; userId: string };
}
const claim = (url: string, token: string, key = randomUUID()) =>
  fetch(`${url}/v1/rewards`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': key },
    body: '{"achievementId":"coin"}',
  });

/** As the client does: the same Idempotency-Key again after a 409, 429, 5xx or a dropped connection, until an answer stands. */
async function claimUntilAnswered(url: string, token: string): Promise<{ id: string; status: string; attempts: number }> {
  const key = randomUUID();
  for (let attempt = 1; attempt <= 400; attempt++) {
    const r = await claim(url, token, key).catch(() => undefined);
    if (r?.status === 201) {
      const body = (await r.json()) as { id: string; status: string };
      if (body.status !== 'pending') return { ...body, attempts: attempt };
    } else await r?.body?.cancel();
    await sleep(25);
  }
  throw new Error(`no answer for ${key}`);
}

async function sandboxPayments(sandboxUrl: string): Promise<Array<{ comment: string }>> {
  return ((await (await fetch(`${sandboxUrl}/_sandbox/payments`)).json()) as { payments: Array<{ comment: string }> }).payments;
}

if (!NGINX) describe.skip(`the nginx deployment (${NGINX_HOW})`, () => it('runs docs/deploy/nginx.conf', () => undefined));
else if (!postgresUrl) describe.skip(`the nginx deployment (${POSTGRES_HOW})`, () => it('runs two relays on PostgreSQL', () => undefined));
else
  describe('docs/deploy/nginx.conf in front of two relays on one PostgreSQL database', { timeout: 120_000 }, () => {
    let d: Deployment;
    beforeAll(async () => {
      d = await deploy();
    }, 60_000);

    it('pays a claim made through the proxy; each relay is ready; plain HTTP is redirected to https', async () => {
      const { token } = await link(d.url, 'through-proxy');
      const r = await claim(d.url, token);
      expect(r.status).toBe(201);
      const reward = (await r.json()) as { id: string; status: string };
      expect(reward.status).toBe('paid');
      expect((await sandboxPayments(d.sandboxUrl)).filter((p) => p.comment.includes(reward.id))).toHaveLength(1);
      for (const relay of d.relays) expect(await (await fetch(`${relay.url}/v1/ready`)).json()).toEqual({ ok: true, store: 'ok', service: 'ok' });
      const plain = await fetch(`${d.redirectUrl}/v1/health`, { redirect: 'manual' });
      expect(plain.status).toBe(301);
      expect(plain.headers.get('location')).toMatch(/^https:\/\/[^/]+\/v1\/health$/);
    });

    it('a game on another origin: allowed through the proxy; an origin not listed is refused, logged, and health says so', async () => {
      const game = 'https://game.example.com';
      const preflight = await fetch(`${d.url}/v1/rewards`, { method: 'OPTIONS', headers: { origin: game, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, idempotency-key' } });
      expect(preflight.headers.get('access-control-allow-origin')).toBe(game);
      const linked = await fetch(`${d.url}/v1/players`, { method: 'POST', headers: { origin: game, 'content-type': 'application/json' }, body: JSON.stringify({ gamertag: 'cross-origin' }) });
      expect(linked.status).toBe(201);
      expect(linked.headers.get('access-control-allow-origin')).toBe(game);
      const stranger = 'https://elsewhere.example.net';
      const refused = await fetch(`${d.url}/v1/catalog`, { headers: { origin: stranger } });
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      expect(((await (await fetch(`${d.url}/v1/health`, { headers: { origin: stranger } })).json()) as { originAllowed: boolean }).originAllowed).toBe(false);
      expect(((await (await fetch(`${d.url}/v1/health`, { headers: { origin: game } })).json()) as { originAllowed: boolean }).originAllowed).toBe(true);
      await expect.poll(() => d.relays.map((r) => r.logs()).join('\n')).toMatch(/"event":"origin_refused"[^\n]*elsewhere\.example\.net|elsewhere\.example\.net[^\n]*"event":"origin_refused"/);
    });

    it('streams events through the proxy, unbuffered: payouts made directly on either relay reach the stream', async () => {
      const { token } = await link(d.url, 'streamer');
      const stream = await openSse(d.url, token);
      try {
        // The first settles that the stream is following; the next two are heard live, and one of
        // them was paid by the relay the stream is not on.
        for (const relay of [d.relays[0]!, d.relays[1]!, d.relays[0]!]) {
          const reward = (await (await claim(relay.url, token)).json()) as { id: string };
          await stream.until((m) => JSON.stringify(m.data).includes(reward.id), 5_000);
        }
      } finally {
        await stream.close();
      }
    });

    it('loses nothing and pays nothing twice when one relay is stopped with SIGTERM mid-load (200 claims, 20 players)', async () => {
      const players = await Promise.all(Array.from({ length: 20 }, (_, i) => link(d.url, `load-${i}`)));
      const [a] = d.relays;
      const exited = new Promise<number | null>((r) => a!.child.once('exit', (code) => r(code)));
      const answers: Array<{ id: string; status: string; attempts: number }> = [];
      let signalled = false;
      const started = Date.now();
      await Promise.all(
        players.map(async (p) => {
          for (let n = 0; n < 10; n++) {
            answers.push(await claimUntilAnswered(d.url, p.token));
            if (answers.length >= 60 && !signalled) {
              signalled = true;
              a!.child.kill('SIGTERM');
            }
          }
        }),
      );
      console.log(`200 claims in ${Date.now() - started} ms; ${answers.filter((x) => x.attempts > 1).length} needed a retry`);
      expect(await exited).toBe(0);
      expect(answers).toHaveLength(200);
      expect(answers.every((x) => x.status === 'paid')).toBe(true);
      const ids = new Set(answers.map((x) => x.id));
      expect(ids.size).toBe(200);
      const payments = await sandboxPayments(d.sandboxUrl);
      const paidIds = payments.map((p) => /\(rewardbus ([^)]+)\)/.exec(p.comment)?.[1]).filter((id) => id && ids.has(id));
      expect(paidIds).toHaveLength(200);
      expect(new Set(paidIds).size).toBe(200);
      // The relay said what it did: nothing cut, its store closed.
      const done = a!.logs().split('\n').find((l) => l.includes('"event":"shutdown_done"'));
      expect(done).toBeDefined();
      console.log(`relay A: ${JSON.parse(done!).msg}`);
      expect(JSON.parse(done!)).toMatchObject({ cut: 0 });
    });
  });

if (NGINX && postgresUrl)
  describe('the rate limit behind nginx', { timeout: 60_000 }, () => {
    it("is keyed on the client's address as nginx saw it; a client's own X-Forwarded-For does not escape it", async () => {
      const d = await deploy({ RELAY_RATE_LIMIT_PER_MINUTE: '3' });
      // Each relay counts on its own: two relays let 2 x 3 links a minute through from one address.
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push(await from('127.0.0.2', `${d.url}/v1/players`, { gamertag: `limited-${i}` }, { 'x-forwarded-for': `203.0.113.${i}` }));
      expect(statuses.filter((s) => s === 201).length).toBeLessThanOrEqual(6);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(4);
      // Another client, through the same proxy (the same socket address at the relay), is not limited.
      expect(await from('127.0.0.3', `${d.url}/v1/players`, { gamertag: 'someone-else' })).toBe(201);
    });
  });

if (NGINX)
  describe('docs/deploy/nginx.conf with TLS', () => {
    it('is a valid nginx configuration as written (nginx -t, a self-signed certificate)', async (ctx) => {
      const dir = mkdtempSync(join(tmpdir(), 'rewardbus-tls-'));
      dirs.push(dir);
      const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
      const made = await exec('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=rewards.example.com', '-keyout', key, '-out', cert]).catch(() => undefined);
      if (!made) return ctx.skip('no openssl to make a certificate');
      const nginxDir = writeNginx(siteConf({ relays: ['127.0.0.1:1', '127.0.0.1:2'], port: await freePort(), redirectPort: await freePort(), tls: { cert, key } }));
      const r = await exec(NGINX!, ['-t', ...nginxArgs(nginxDir)]).catch((err: { stderr: string }) => ({ stderr: err.stderr, failed: true }));
      expect(r).not.toHaveProperty('failed');
    });
  });
