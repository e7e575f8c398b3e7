// 10,000 players listening on one relay (issue 39, aim 5): 10,000 event streams (GET /v1/events)
// from many loopback addresses, held while 200 rewards/s are paid to 200 of those players. It
// measures the relay's memory (RSS) before and with the streams open, whether every stream's
// keep-alive comes on time (one every 15 s of silence), and how long after its claim a payout is
// heard on its player's stream.
// `node --import tsx bench/many-streams.ts` (about 1.5 minutes); `npm run bench` prints it too.

import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPlayerTokens } from '../src/relay/core/player-tokens.js';
import { startChild, stop } from '../test/helpers/processes.js';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000);
/** Loopback addresses the streams come from (one address has about 28,000 ports to give). */
const ADDRESSES = 50;
const PAYERS = 200;
const PAY_RATE = Number(process.env.BENCH_STREAMS_PAY_RATE ?? 200);
/** The relay's keep-alive on a silent stream (routes/events.ts). */
const KEEP_ALIVE_MS = 15_000;
/** Held long enough for every stream to get two keep-alives after the last one opened. */
const HOLD_MS = 2 * KEEP_ALIVE_MS + 3_000;
const OPENING_AT_ONCE = 200;
const SANDBOX_KEY = 'bench-sandbox-key';

export interface ManyStreams {
  streams: number;
  refused: number;
  /** The relay's soft limit on open files, as it ran (raised to its hard limit first). */
  fileLimit: number;
  rssBeforeMb: number;
  rssOpenMb: number;
  rssPayingMb: number;
  /** (RSS with the streams open − before) / streams. */
  kbPerStream: number;
  openSeconds: number;
  keepAlives: number;
  /** Keep-alives later than 15 s of silence by: p50, p99 and the worst, ms. */
  lateP50: number;
  lateP99: number;
  lateMax: number;
  /** Streams with a keep-alive more than a second late, and streams that got none they were due. */
  lateStreams: number;
  silentStreams: number;
  paid: number;
  payRate: number;
  /** A payout's claim sent → its `paid` event on the player's stream, ms. */
  heardP50: number;
  heardP99: number;
  /** The claim's own answer, sent → answered, ms: beside the above, what the relay's queue adds. */
  answerP50: number;
  answerP99: number;
  /** Heard on the stream − answered (negative: heard first), ms. */
  afterAnswerP50: number;
  afterAnswerP99: number;
  unheard: number;
  /** Claims answered 201 as against sent. */
  claimErrors: number;
  failures: Record<string, number>;
  /** Claims sent again under their key after a reset kept-alive socket. */
  retried: number;
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const fileLimitOf = (pid: number) => Number(/Max open files\s+(\d+)/.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))?.[1] ?? 0);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : Number.NaN;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The relay as @rewardbus/relay ships it (npm run bench builds it first): its memory is what operators see, without tsx's. */
const BUILT = 'packages/relay/dist/bin/rewardbus.js';
export const RUNS_BUILT = existsSync(BUILT);

/** The relay started as docs/deploy.md has operators start it: its open-files limit raised to the hard limit first. */
function startRelay(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const node = `exec ${JSON.stringify(process.execPath)} ${RUNS_BUILT ? BUILT : '--import tsx src/bin/rewardbus.ts'} start`;
  const child = spawn('bash', ['-c', `ulimit -n "$(ulimit -Hn)" && ${node}`], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /"url":"(http:\/\/[^"]+)","msg":"rewardbus relay/.exec(out);
      if (!m) return;
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      resolve({ child, url: m[1]! });
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the relay exited with ${code}: ${out}`)));
  });
}

interface Stream {
  socket: Socket;
  opened: number;
  last: number;
  late: number[];
  keepAlives: number;
  buffer: string;
}

export async function manyStreams(): Promise<ManyStreams> {
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-streams-'));
  const children: ChildProcess[] = [];
  const streams: Stream[] = [];
  try {
    const sandbox = await startChild(['src/bin/rewardbus.ts', 'sandbox', '0'], { SANDBOX_API_KEY: SANDBOX_KEY }, /sandbox on (http:\/\/\S+)/);
    children.push(sandbox.child);
    const catalog = join(dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({ achievements: [{ id: 'bench', title: 'Bench', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }] }));
    const secret = randomUUID() + randomUUID();
    const relay = await startRelay({
      PAYMENTS_API_KEY: SANDBOX_KEY,
      PAYMENTS_BASE_URL: sandbox.match[1]!,
      RELAY_PUBLIC_URL: 'http://127.0.0.1',
      RELAY_DATA_DIR: dir,
      RELAY_SECRET: secret,
      RELAY_CATALOG: catalog,
      RELAY_USER_DAILY_CAP_SATS: '0',
      RELAY_DAILY_BUDGET_SATS: '0',
      RELAY_RATE_LIMIT_PER_MINUTE: '0',
      // 10,000 streams from 50 addresses: 200 each, past the default cap of 20 an address (a NAT's
      // players). Raised here, by its setting, for this bench only.
      RELAY_STREAMS_PER_ADDRESS: String(Math.ceil(STREAMS / ADDRESSES)),
    });
    children.push(relay.child);
    const pid = relay.child.pid!;
    const { port } = new URL(relay.url);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
    const post = (path: string, body: string, token?: string, key?: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          `${relay.url}${path}`,
          {
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...(key ? { 'idempotency-key': key } : {}) },
          },
          (res) => {
            let b = '';
            res.on('data', (d: Buffer) => (b += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });

    // The players paid: linked through the relay (the service knows them). The others only listen:
    // their tokens are signed here with the relay's secret, as the relay would sign them.
    const payers: string[] = [];
    for (let i = 0; i < PAYERS; i += 20)
      payers.push(
        ...(await Promise.all(
          Array.from({ length: 20 }, async (_, k) => (JSON.parse((await post('/v1/players', JSON.stringify({ gamertag: `listener${i + k}` }))).body) as { token: string }).token),
        )),
      );
    const tokens = createPlayerTokens(secret, 86_400_000);
    const listeners = Array.from({ length: STREAMS - PAYERS }, (_, i) => tokens.issue(`listener-${i}-${randomUUID()}`, `l${i}`).token);
    const all = [...payers, ...listeners];

    const fileLimit = fileLimitOf(pid);
    const rssBeforeMb = rssMb(pid);
    const heard = new Map<string, number>();
    let refused = 0;
    const openOne = (token: string, i: number) =>
      new Promise<void>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port: Number(port), localAddress: `127.0.0.${2 + (i % ADDRESSES)}` });
        const s: Stream = { socket, opened: 0, last: 0, late: [], keepAlives: 0, buffer: '' };
        const payer = i < PAYERS;
        socket.setEncoding('latin1');
        socket.on('connect', () => socket.write(`GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`));
        socket.on('data', (chunk: string) => {
          const t = performance.now();
          if (!s.opened) {
            if (!chunk.startsWith('HTTP/1.1 200')) {
              refused++;
              socket.destroy();
              return resolve();
            }
            s.opened = s.last = t;
            streams.push(s);
            resolve();
          }
          if (chunk.includes(': keep-alive')) {
            s.keepAlives++;
            s.late.push(t - s.last - KEEP_ALIVE_MS);
          }
          if (payer) {
            // The paid event of a claim, by its key; a message may come in two reads.
            s.buffer += chunk;
            const end = s.buffer.lastIndexOf('\n\n');
            if (end >= 0) {
              for (const m of s.buffer.slice(0, end).matchAll(/^data: (\{.*\})$/gm)) {
                const r = JSON.parse(m[1]!) as { idempotencyKey?: string; status?: string };
                if (r.status === 'paid' && r.idempotencyKey) heard.set(r.idempotencyKey, t);
              }
              s.buffer = s.buffer.slice(end + 2);
            }
          }
          s.last = t;
        });
        socket.on('error', () => resolve());
      });
    const t0 = performance.now();
    for (let i = 0; i < all.length; i += OPENING_AT_ONCE) await Promise.all(all.slice(i, i + OPENING_AT_ONCE).map((t, k) => openOne(t, i + k)));
    const openSeconds = (performance.now() - t0) / 1000;
    const lastOpened = performance.now();
    await sleep(2000);
    const rssOpenMb = rssMb(pid);

    // 200 rewards/s to the payers, round after round, while every stream is held.
    const sent = new Map<string, number>();
    const answered = new Map<string, number>();
    let claimErrors = 0;
    // What a claim that failed got (a status or an error): printed, so a failure says what it was.
    const failures = new Map<string, number>();
    const failed = (what: string) => {
      claimErrors++;
      failures.set(what, (failures.get(what) ?? 0) + 1);
    };
    let retried = 0;
    let n = 0;
    const start = performance.now();
    const until = lastOpened + HOLD_MS;
    const claims: Promise<unknown>[] = [];
    while (performance.now() < until - 3000) {
      const due = Math.floor(((performance.now() - start) / 1000) * PAY_RATE);
      for (; n < due; n++) {
        const key = randomUUID();
        sent.set(key, performance.now());
        const token = payers[n % PAYERS];
        const claim = () => post('/v1/rewards', '{"achievementId":"bench"}', token, key);
        claims.push(
          claim()
            // A kept-alive socket the relay closed as it was reused (Node's idle timeout, 5 s: the
            // sockets wait while the streams open) resets: sent again under its key, as a client's
            // queue sends it; its time still counts from the first send.
            .catch((err: NodeJS.ErrnoException) => {
              if (err.code !== 'ECONNRESET') throw err;
              retried++;
              return claim();
            })
            .then(
              (r) => (r.status === 201 ? answered.set(key, performance.now()) : failed(String(r.status))),
              (err: Error) => failed(err.message),
            ),
        );
      }
      await sleep(5);
    }
    const rssPayingMb = rssMb(pid);
    await Promise.all(claims);
    await sleep(Math.max(0, until - performance.now()));
    // On a busy machine the last claims are answered after the hold: their events get up to 5 s more to be heard.
    for (const by = performance.now() + 5000; [...answered.keys()].some((key) => !heard.has(key)) && performance.now() < by; ) await sleep(50);

    const late = streams.flatMap((s) => s.late);
    const heardMs = [...sent].flatMap(([key, at]) => (heard.has(key) ? [heard.get(key)! - at] : []));
    const answerMs = [...answered].map(([key, at]) => at - sent.get(key)!);
    const afterAnswer = [...answered].flatMap(([key, at]) => (heard.has(key) ? [heard.get(key)! - at] : []));
    agent.destroy();
    return {
      streams: streams.length,
      refused,
      fileLimit,
      rssBeforeMb,
      rssOpenMb,
      rssPayingMb,
      kbPerStream: ((rssOpenMb - rssBeforeMb) * 1024) / Math.max(1, streams.length),
      openSeconds,
      keepAlives: late.length,
      lateP50: pct(late, 50),
      lateP99: pct(late, 99),
      lateMax: Math.max(...late),
      lateStreams: streams.filter((s) => s.late.some((l) => l > 1000)).length,
      // Silent for two keep-alive periods and more, with none heard: its keep-alives never came.
      silentStreams: streams.filter((s) => s.keepAlives === 0 && performance.now() - s.last > 2 * KEEP_ALIVE_MS).length,
      paid: sent.size,
      payRate: sent.size / ((until - 3000 - start) / 1000),
      heardP50: pct(heardMs, 50),
      heardP99: pct(heardMs, 99),
      answerP50: pct(answerMs, 50),
      answerP99: pct(answerMs, 99),
      afterAnswerP50: pct(afterAnswer, 50),
      afterAnswerP99: pct(afterAnswer, 99),
      unheard: sent.size - heardMs.length,
      claimErrors,
      failures: Object.fromEntries(failures),
      retried,
    };
  } finally {
    for (const s of streams) s.socket.destroy();
    await Promise.all(children.map(stop));
    rmSync(dir, { recursive: true, force: true });
  }
}

export function printManyStreams(r: ManyStreams) {
  const f = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  const how = RUNS_BUILT ? 'as built' : 'under tsx: npm run build first for the memory operators see';
  console.log(
    `\n${f(STREAMS)} players listening on one relay (SQLite, ${how}): event streams from ${ADDRESSES} loopback addresses, ${f(PAY_RATE)} rewards/s paid to ${PAYERS} of them`,
  );
  console.log(
    `  streams open                        ${f(r.streams).padStart(8)}   ` +
      `(${r.refused} refused; opened in ${f(r.openSeconds, 1)} s; the relay's open-files limit ${f(r.fileLimit)})`,
  );
  console.log(`  relay RSS before / open / paying    ${f(r.rssBeforeMb)} / ${f(r.rssOpenMb)} / ${f(r.rssPayingMb)} MB   (aim ≤ 300 MB; ${f(r.kbPerStream, 1)} KB a stream)`);
  console.log(
    `  keep-alives late past 15 s          p50 ${f(r.lateP50)} ms, p99 ${f(r.lateP99)} ms, worst ${f(r.lateMax)} ms   ` +
      `(${f(r.keepAlives)} heard; ${r.lateStreams} streams > 1 s late, ${r.silentStreams} silent)`,
  );
  console.log(
    `  a payout heard on its stream        p50 ${f(r.heardP50)} ms, p99 ${f(r.heardP99)} ms from its claim   ` +
      `(aim p99 ≤ 1 s; ${f(r.paid)} paid at ${f(r.payRate)}/s, ${r.unheard} unheard, ${r.claimErrors} claims not 201${r.claimErrors ? `: ${JSON.stringify(r.failures)}` : ''}; ${r.retried} sent again after a reset)`,
  );
  console.log(`    its claim answered                p50 ${f(r.answerP50)} ms, p99 ${f(r.answerP99)} ms from sent (the relay's own queue at this rate)`);
  console.log(`    heard on the stream − answered    p50 ${f(r.afterAnswerP50)} ms, p99 ${f(r.afterAnswerP99)} ms (negative: heard before the answer)`);
}

if (import.meta.url === `file://${process.argv[1]}`) printManyStreams(await manyStreams());
