// The deployment of docs/deploy.md, run: docs/deploy/nginx.conf (its ports and paths replaced, and
// plain HTTP on loopback: its ssl_ lines dropped; the TLS form is checked with `nginx -t` and a
// self-signed certificate) in front of two relay processes on one PostgreSQL database, paying the
// standalone sandbox as the payments service (live mode).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freshDatabase, POSTGRES_HOW } from '../helpers/postgres.js';
import { freePort, startChild, stop } from '../helpers/processes.js';
import { relayCommand, startRelayCommand } from '../helpers/relay-command.js';
import { openSse } from '../helpers/sse.js';

const exec = promisify(execFile);
const postgresUrl = inject('postgresUrl');
// NGINX_BIN, when set, is the only one tried.
const NGINX = (process.env.NGINX_BIN ? [process.env.NGINX_BIN] : ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx']).find((p) => existsSync(p));
const NGINX_HOW = 'the deployment test needs nginx: apt-get install -y nginx (or set NGINX_BIN)';
if (!NGINX && process.env.CI === 'true') throw new Error(`CI=true: ${NGINX_HOW}`);

const SANDBOX_KEY = `deploy_${randomUUID()}`;
/** The project's second key at the service, made for a rotation: the sandbox accepts both. */
const SANDBOX_KEY_2 = `deploy_${randomUUID()}`;
const SECRET = randomUUID() + randomUUID();
const WEBHOOK_SECRET = randomUUID() + randomUUID();
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

/** docs/deploy/nginx.conf with this test's ports and paths: only `listen`, `server`, ssl_ lines and the logs' directory change. */
function siteConf(o: { relays: [string, string]; port: number; redirectPort: number; logDir: string; tls?: { cert: string; key: string } }): string {
  let conf = swap(DOCS_CONF, '/var/log/nginx/', `${o.logDir}/`);
  conf = swap(conf, 'server 127.0.0.1:8787 ', `server ${o.relays[0]} `);
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
  # Debian's own: every request, in the combined format (its request line with the query).
  access_log ${join(dir, 'access.log')};
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
function writeNginx(site: (dir: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-nginx-'));
  dirs.push(dir);
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'temp'));
  writeFileSync(join(dir, 'rewardbus.conf'), site(dir));
  writeFileSync(join(dir, 'nginx.conf'), mainConf(dir));
  return dir;
}

interface Deployment {
  sandboxUrl: string;
  /** nginx, the address games and the service use. */
  url: string;
  redirectUrl: string;
  relays: DeployedRelay[];
  /** nginx's access log, as it writes it. */
  accessLog: () => string;
  /** nginx's error log (its stderr). */
  errorLog: () => string;
}

interface DeployedRelay {
  child: ChildProcess;
  url: string;
  logs: () => string;
  /** Its settings (the relay.env of docs/deploy.md, with this test's values). */
  env: Record<string, string>;
}

/** A relay process with these settings, its log kept. */
async function startDeployedRelay(env: Record<string, string>): Promise<DeployedRelay> {
  const relay = await startRelayCommand(env);
  children.push(relay.child);
  let logs = '';
  relay.child.stdout!.on('data', (d: Buffer) => void (logs += d.toString()));
  return { ...relay, logs: () => logs, env };
}

/** The standalone sandbox, a fresh database, two relays sharing it, nginx in front. */
async function deploy(env: Record<string, string> = {}): Promise<Deployment> {
  const sandbox = await startChild(relayCommand('sandbox', '0'), { SANDBOX_API_KEY: `${SANDBOX_KEY},${SANDBOX_KEY_2}` }, /sandbox on (http:\/\/\S+)/);
  children.push(sandbox.child);
  const [port, redirectPort] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-deploy-'));
  dirs.push(dir);
  const catalog = join(dir, 'catalog.json');
  writeFileSync(catalog, JSON.stringify({ achievements: [{ id: 'coin', title: 'Coin', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }] }));
  const databaseUrl = await freshDatabase(postgresUrl, { migrated: true });
  // Each relay on a port of its own, kept across its restarts (nginx's upstream names them).
  const relayPorts = [await freePort(), await freePort()];
  const relays = await Promise.all(
    [0, 1].map((i) =>
      startDeployedRelay({
        PORT: String(relayPorts[i]),
        PAYMENTS_API_KEY: SANDBOX_KEY,
        PAYMENTS_BASE_URL: sandbox.match[1]!,
        RELAY_PUBLIC_URL: `http://127.0.0.1:${port}`,
        WEBHOOK_SECRET: WEBHOOK_SECRET,
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
      }),
    ),
  );
  const hostPort = (u: string) => new URL(u).host;
  const nginxDir = writeNginx((logDir) => siteConf({ relays: [hostPort(relays[0]!.url), hostPort(relays[1]!.url)], port, redirectPort, logDir }));
  const nginx = spawn(NGINX!, nginxArgs(nginxDir), { stdio: ['ignore', 'ignore', 'pipe'] });
  let nginxLog = '';
  nginx.stderr!.on('data', (d: Buffer) => void (nginxLog += d.toString()));
  children.push(nginx);
  const url = `http://127.0.0.1:${port}`;
  // Until nginx answers (expect.poll is for tests; this runs in beforeAll too).
  for (const deadline = Date.now() + 10_000; (await fetch(`${url}/v1/health`).catch(() => undefined))?.status !== 200; await sleep(50)) {
    if (nginx.exitCode !== null || Date.now() > deadline) throw new Error(`nginx did not start: ${nginxLog}`);
  }
  // Every access log nginx writes in its directory: Debian's and any the site's file names.
  const accessLog = () =>
    readdirSync(nginxDir)
      .filter((f) => /access.*\.log$/.test(f))
      .map((f) => readFileSync(join(nginxDir, f), 'utf8'))
      .join('');
  return { sandboxUrl: sandbox.match[1]!, url, redirectUrl: `http://127.0.0.1:${redirectPort}`, relays, accessLog, errorLog: () => nginxLog };
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

// Without nginx or PostgreSQL the deployment cannot run: skipped with what to install, and a
// failure under CI=true, where a missing program must not pass for a green run.
const missing = !NGINX ? NGINX_HOW : !postgresUrl ? POSTGRES_HOW : undefined;
if (missing)
  describe('the nginx deployment', () =>
    it(`needs ${!NGINX ? 'nginx' : 'PostgreSQL'} (${missing})`, (ctx) => {
      if (process.env.CI === 'true') throw new Error(`CI=true: ${missing}`);
      ctx.skip();
    }));
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
      const preflight = await fetch(`${d.url}/v1/rewards`, {
        method: 'OPTIONS',
        headers: { origin: game, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, idempotency-key' },
      });
      expect(preflight.headers.get('access-control-allow-origin')).toBe(game);
      const linked = await fetch(`${d.url}/v1/players`, {
        method: 'POST',
        headers: { origin: game, 'content-type': 'application/json' },
        body: JSON.stringify({ gamertag: 'cross-origin' }),
      });
      expect(linked.status).toBe(201);
      expect(linked.headers.get('access-control-allow-origin')).toBe(game);
      const stranger = 'https://elsewhere.example.net';
      const refused = await fetch(`${d.url}/v1/catalog`, { headers: { origin: stranger } });
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      expect(((await (await fetch(`${d.url}/v1/health`, { headers: { origin: stranger } })).json()) as { originAllowed: boolean }).originAllowed).toBe(false);
      expect(((await (await fetch(`${d.url}/v1/health`, { headers: { origin: game } })).json()) as { originAllowed: boolean }).originAllowed).toBe(true);
      await expect
        .poll(() => d.relays.map((r) => r.logs()).join('\n'))
        .toMatch(/"event":"origin_refused"[^\n]*elsewhere\.example\.net|elsewhere\.example\.net[^\n]*"event":"origin_refused"/);
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

    it("finding 6: nginx's access log keeps no query string of /v1/: a stream opened with ?token=… leaves no token there", async () => {
      const { token } = await link(d.url, 'logged');
      const stream = await openSse(d.url, token);
      await stream.close();
      // Through the plain-HTTP server too: it only redirects, but it logs what it was asked.
      await (await fetch(`${d.redirectUrl}/v1/events?token=${encodeURIComponent(token)}`, { redirect: 'manual' })).body?.cancel();
      // nginx writes a request's line once it is over: the stream's, once the client left.
      await expect.poll(() => d.accessLog().match(/GET \/v1\/events/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
      const log = d.accessLog();
      expect(log).not.toContain(token);
      expect(log).not.toContain(encodeURIComponent(token));
      expect(log).not.toMatch(/\/v1\/events\?/);
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
      const done = a!
        .logs()
        .split('\n')
        .find((l) => l.includes('"event":"shutdown_done"'));
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
      const made = await exec('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=rewards.example.com', '-keyout', key, '-out', cert]).catch(
        () => undefined,
      );
      if (!made) return ctx.skip('no openssl to make a certificate');
      const [port, redirectPort] = [await freePort(), await freePort()];
      const nginxDir = writeNginx((logDir) => siteConf({ relays: ['127.0.0.1:1', '127.0.0.1:2'], port, redirectPort, logDir, tls: { cert, key } }));
      const r = await exec(NGINX!, ['-t', ...nginxArgs(nginxDir)]).catch((err: { stderr: string }) => ({ stderr: err.stderr, failed: true }));
      expect(r).not.toHaveProperty('failed');
    });
  });

/**
 * docs/deploy.md §5's rolling restart, as an operator scripts it: each relay in turn stopped
 * (SIGTERM; it drains and exits 0), started again with `change` in its settings, ready on its own
 * port, then `pauseMs` more before the next: the time nginx goes on counting a relay it could not
 * reach as down (fail_timeout, plus a second: nginx counts in whole seconds). This wait is the
 * documented procedure itself, not a test waiting on a condition.
 */
async function rollingRestart(d: Deployment, change: Record<string, string>, pauseMs: number, last = false) {
  for (let i = 0; i < d.relays.length; i++) {
    const old = d.relays[i]!;
    const exited = new Promise<number | null>((r) => old.child.once('exit', (code) => r(code)));
    timeline.push(`${new Date().toISOString()} relay ${i}: SIGTERM`);
    old.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    timeline.push(`${new Date().toISOString()} relay ${i}: exited`);
    const relay = await startDeployedRelay({ ...old.env, ...change });
    d.relays[i] = relay;
    await expect.poll(async () => (await fetch(`${relay.url}/v1/ready`).catch(() => undefined))?.status, { timeout: 20_000, interval: 100 }).toBe(200);
    timeline.push(`${new Date().toISOString()} relay ${i}: ready`);
    if (!(last && i === d.relays.length - 1)) await sleep(pauseMs);
  }
}
const timeline: string[] = [];

/** nginx's fail_timeout in docs/deploy/nginx.conf, in seconds: the pause of the rolling restart comes from it. */
function failTimeoutSeconds(): number {
  const values = [...DOCS_CONF.matchAll(/^\s*server \S+ [^;]*fail_timeout=(\d+)s/gm)].map((m) => Number(m[1]));
  if (!values.length) throw new Error('docs/deploy/nginx.conf no longer sets fail_timeout on its servers');
  return Math.max(...values);
}

/** An event stream's messages as they come (id and data only). */
async function* streamMessages(res: Response): AsyncGenerator<{ id: string; data: string }> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end).split('\n');
      buffer = buffer.slice(end + 2);
      const id = block
        .find((l) => l.startsWith('id:'))
        ?.slice(3)
        .trim();
      const data = block
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n');
      if (id) yield { id, data };
    }
  }
}

const signed = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

if (NGINX && postgresUrl)
  describe('a rolling restart under load (finding 7)', { timeout: 150_000 }, () => {
    it('finding 7: both relays restarted one after the other, and every secret rotated, while players claim and stream through nginx: 0 non-2xx, 0 stream failures', async () => {
      const [ADMIN, ADMIN_2] = [randomUUID() + randomUUID(), randomUUID() + randomUUID()];
      const [SECRET_2, WEBHOOK_SECRET_2] = [randomUUID() + randomUUID(), randomUUID() + randomUUID()];
      const d = await deploy({ RELAY_ADMIN_TOKEN: ADMIN });
      const pauseMs = (failTimeoutSeconds() + 1) * 1000;
      const failures: string[] = [];
      const counts = { claims: 0, streamsOpened: 0, scrapes: 0, webhooks: 0, links: 0 };
      let running = true;
      let claimsRunning = true;
      // What the operator's scraper and the service use, moved to the new secret once every relay accepts it.
      let adminToken = ADMIN;
      let webhookSecret = WEBHOOK_SECRET;

      const players = await Promise.all(
        Array.from({ length: 6 }, async (_, i) => ({ ...(await link(d.url, `rolling-${i}`)), paid: [] as string[], heard: [] as string[], gamertag: `rolling-${i}` })),
      );
      const claiming = players.map(async (p) => {
        while (claimsRunning) {
          const r = await claim(d.url, p.token).catch((err: Error) => err);
          counts.claims++;
          if (r instanceof Error) failures.push(`${new Date().toISOString()} claim: ${r.message}`);
          else if (r.status !== 201) failures.push(`${new Date().toISOString()} claim: ${r.status} ${await r.text()}`);
          else p.paid.push(((await r.json()) as { id: string }).id);
          // A player's pace, not a wait on anything.
          await sleep(150);
        }
      });
      // As a browser's EventSource: reconnect with Last-Event-ID when the stream ends; a reconnect
      // answered with anything but 200 (or not at all) is a failure the game would show.
      const streaming = players.map(async (p) => {
        let last = '0';
        while (running) {
          const controller = new AbortController();
          const stop = setInterval(() => !running && controller.abort(), 50);
          try {
            const res = await fetch(`${d.url}/v1/events?token=${encodeURIComponent(p.token)}`, { headers: { 'last-event-id': last }, signal: controller.signal });
            if (res.status !== 200) {
              failures.push(`${new Date().toISOString()} stream: ${res.status} ${await res.text()}`);
              await sleep(250);
              continue;
            }
            counts.streamsOpened++;
            for await (const m of streamMessages(res)) {
              last = m.id;
              p.heard.push(m.data);
            }
          } catch (err) {
            if (running) failures.push(`${new Date().toISOString()} stream: ${(err as Error).message}`);
          } finally {
            clearInterval(stop);
          }
        }
      });
      const scraping = (async () => {
        while (running) {
          const r = await fetch(`${d.url}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } }).catch((err: Error) => err);
          counts.scrapes++;
          if (r instanceof Error) failures.push(`${new Date().toISOString()} metrics: ${r.message}`);
          else if (r.status !== 200) failures.push(`${new Date().toISOString()} metrics: ${r.status} ${await r.text()}`);
          else await r.body?.cancel();
          await sleep(100);
        }
      })();
      const delivering = (async () => {
        while (running) {
          const body = JSON.stringify({ id: randomUUID(), type: 'wallet.updated', data: {} });
          const r = await fetch(`${d.url}/v1/webhooks/payments`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-zbd-signature': signed(webhookSecret, body) },
            body,
          }).catch((err: Error) => err);
          counts.webhooks++;
          if (r instanceof Error) failures.push(`${new Date().toISOString()} webhook: ${r.message}`);
          else if (r.status !== 200) failures.push(`${new Date().toISOString()} webhook: ${r.status} ${await r.text()}`);
          else await r.body?.cancel();
          await sleep(100);
        }
      })();

      const started = Date.now();
      try {
        // docs/deploy.md §7, every secret at once. First: the new player-token secret verifies
        // everywhere (OLD,NEW), the new webhook secret and operator token are accepted beside the
        // old, the relays pay with the project's second key.
        await rollingRestart(
          d,
          {
            RELAY_SECRET: `${SECRET},${SECRET_2}`,
            WEBHOOK_SECRET: `${WEBHOOK_SECRET_2},${WEBHOOK_SECRET}`,
            RELAY_ADMIN_TOKEN: `${ADMIN_2},${ADMIN}`,
            PAYMENTS_API_KEY: SANDBOX_KEY_2,
          },
          pauseMs,
        );
        webhookSecret = WEBHOOK_SECRET_2;
        adminToken = ADMIN_2;
        // Then NEW signs (NEW,OLD), on every relay.
        await rollingRestart(d, { RELAY_SECRET: `${SECRET_2},${SECRET}` }, pauseMs);
        // 24 hours on, every token in use was signed with NEW: here, each player links again.
        for (const p of players) {
          p.token = (await link(d.url, p.gamertag)).token;
          counts.links++;
        }
        // Last: only the new secrets.
        await rollingRestart(d, { RELAY_SECRET: SECRET_2, WEBHOOK_SECRET: WEBHOOK_SECRET_2, RELAY_ADMIN_TOKEN: ADMIN_2 }, pauseMs, true);
        // Still answering, on the new secrets alone.
        await expect.poll(() => players.every((p) => p.paid.length >= 3)).toBe(true);
        claimsRunning = false;
        await Promise.all(claiming);
        // Every reward paid is heard on its player's stream, however often the stream moved.
        await expect
          .poll(() => players.flatMap((p) => p.paid.filter((id) => !p.heard.some((data) => data.includes(id))).map((id) => `${p.gamertag}: ${id}`)), { timeout: 10_000 })
          .toEqual([]);
      } finally {
        claimsRunning = false;
        running = false;
        await Promise.all([...claiming, ...streaming, scraping, delivering]);
      }
      console.log(`6 restarts in ${Date.now() - started} ms: ${JSON.stringify(counts)}; ${failures.length} failures\n${timeline.join('\n')}`);
      if (failures.length)
        console.log(
          d
            .errorLog()
            .split('\n')
            .filter((l) => /\[(error|warn|crit)\]/.test(l))
            .slice(-40)
            .join('\n'),
        );
      expect(failures).toEqual([]);
      // Every relay is on the new secrets only.
      for (const relay of d.relays)
        expect(relay.env).toMatchObject({ RELAY_SECRET: SECRET_2, WEBHOOK_SECRET: WEBHOOK_SECRET_2, RELAY_ADMIN_TOKEN: ADMIN_2, PAYMENTS_API_KEY: SANDBOX_KEY_2 });
      expect(counts.claims).toBeGreaterThan(60);
      // Each stream was ended by a stopping relay, and reopened through nginx, several times.
      expect(counts.streamsOpened).toBeGreaterThanOrEqual(players.length * 4);
    });
  });
