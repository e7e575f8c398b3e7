// From unlock() to the toast (issue 39, aim 4): the demo in Chromium, its relay (with the embedded
// sandbox) in a process of its own under a steady load of other players' claims. Each sample is
// one unlock() in the page, timed there: to the bus's `reward:paid`, and to the frame that drew
// its toast; beside it, the claim's own request as the browser timed it, and the relay's claim
// latency under the same load as the load generator saw it. Then the same unlocks with the game's
// loop asleep: what the client adds once the page's main thread is not drawing the game.
// `node --import tsx bench/toast-latency.ts` (about a minute); `npm run bench` prints it too.

import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { chromium } from 'playwright-core';
import { DEFAULT_CATALOG } from '../src/relay/core/catalog.js';
import { startChild, stop } from '../test/helpers/processes.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Unlocks timed in the page, after a few to warm up (the toast's drawing is loaded with the first). */
const SAMPLES = Number(process.env.BENCH_TOAST_SAMPLES ?? 100);
const WARM_UP = 5;
/** Unlocks timed again with the game's loop asleep: what the client adds when the page's main thread is free. */
const IDLE_SAMPLES = Number(process.env.BENCH_TOAST_IDLE_SAMPLES ?? 40);
/** Other players' claims per second while the samples run. */
const LOAD_RATE = Number(process.env.BENCH_TOAST_LOAD ?? 100);
const LOAD_CONNECTIONS = 8;

export interface Percentiles {
  p50: number;
  p99: number;
}
export interface ToastLatency {
  samples: number;
  /** unlock() → `reward:paid` on the bus, ms. */
  paid: Percentiles;
  /** unlock() → the frame that drew the toast, ms. */
  toast: Percentiles;
  /** The claim's request (POST /v1/rewards) as the browser timed it, ms. */
  request: Percentiles;
  /** What the client adds: unlock → paid, less its request, per sample, ms. */
  clientAdds: Percentiles;
  /** Of it: unlock() → the request leaves (stored; the tab's lock, and the queue read back, only when the tab takes the lock), ms. */
  beforeRequest: Percentiles;
  /** Of it: the answer → `reward:paid` (the intent deleted first), ms. */
  afterAnswer: Percentiles;
  /** The relay's claims under the same load, as the load generator saw them. */
  relay: Percentiles & { rps: number };
  loadRate: number;
  /**
   * The floor: one bare IndexedDB write committed in the same page, under the same load (a put; a
   * delete), ms: measured between the unlocks, so in the same scene of the game as they are.
   */
  idbPut: Percentiles;
  idbDelete: Percentiles;
  /** The same writes committed by a worker and timed there: IndexedDB's own commit, without waiting for the page's main thread. */
  workerPut: Percentiles;
  workerDelete: Percentiles;
  /**
   * One answer reaching the page's code once it has arrived, under the same load, ms: a bare
   * fetch's body read (its promise settled, less its responseEnd), and a worker's message (its
   * round trip, less the worker's own time); and an XMLHttpRequest's load, for comparison with
   * fetch's. Any client waits for at least one.
   */
  fetchHop: Percentiles;
  workerHop: Percentiles;
  xhrHop: Percentiles;
  /**
   * The same unlocks with the game's loop asleep (nothing drawn, the page's main thread free):
   * what the client's own work adds, apart from waiting for the game's frames.
   */
  idle: { samples: number; paid: Percentiles; clientAdds: Percentiles; beforeRequest: Percentiles; afterAnswer: Percentiles; idbDelete: Percentiles; fetchHop: Percentiles };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
const percentiles = (xs: number[]): Percentiles => ({ p50: pct(xs, 50), p99: pct(xs, 99) });

type Sample = {
  paid: number;
  toast: number;
  request: number;
  before: number;
  after: number;
  put: number;
  del: number;
  wput: number;
  wdel: number;
  fhop: number;
  whop: number;
  xhop: number;
};

export async function toastLatency(): Promise<ToastLatency | string> {
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`;
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-toast-'));
  const catalog = join(dir, 'catalog.json');
  // The demo's achievements, and one the bench may unlock as often as it likes.
  writeFileSync(catalog, JSON.stringify({ achievements: [...DEFAULT_CATALOG, { id: 'bench', title: 'Bench', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }] }));
  const demo = await startChild(
    ['demo/serve.ts'],
    {
      PORT: '0',
      RELAY_DATA_DIR: dir,
      RELAY_CATALOG: catalog,
      RELAY_RATE_LIMIT_PER_MINUTE: '0',
      RELAY_USER_DAILY_CAP_SATS: '0',
      RELAY_DAILY_BUDGET_SATS: '0',
      LOG_LEVEL: 'warn',
    },
    /demo: (http:\/\/\S+?)\/?\s/,
  );
  const url = demo.match[1]!;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    // The floor's worker is made from a blob: URL, which the demo's CSP does not allow (the client makes no worker).
    const page = await (await browser.newContext({ viewport: { width: 1180, height: 640 }, bypassCSP: true })).newPage();
    await page.goto(`${url}/`);
    await page.waitForFunction(() => (globalThis as DemoWindow).game?.scene.isActive('title'));
    await page.fill('#gamertag', 'toast-bench');
    await page.click('#login button');
    await page.waitForFunction(() => (globalThis as DemoWindow).game.scene.isActive('play'));

    // Other players claiming meanwhile, at a steady rate.
    const tokens = await Promise.all(
      Array.from({ length: LOAD_CONNECTIONS }, async (_, i) => {
        const r = await fetch(`${url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag: `load${i}` }) });
        return ((await r.json()) as { token: string }).token;
      }),
    );
    let n = 0;
    const loading = autocannon({
      url: `${url}/v1/rewards`,
      connections: LOAD_CONNECTIONS,
      overallRate: LOAD_RATE,
      duration: 600,
      method: 'POST',
      body: '{"achievementId":"bench"}',
      requests: [
        {
          setupRequest: (req: autocannon.Request) => ({
            ...req,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[n++ % tokens.length]}`, 'idempotency-key': randomUUID() },
          }),
        },
      ],
    });
    // tsx names the functions it compiles with a helper the page does not have.
    await page.evaluate('globalThis.__name = (f) => f');
    const samples = (await page.evaluate(unlockSamples, { count: WARM_UP + SAMPLES, asleep: false })).slice(WARM_UP);
    const idle = (await page.evaluate(unlockSamples, { count: WARM_UP + IDLE_SAMPLES, asleep: true })).slice(WARM_UP);
    (loading as unknown as { stop(): void }).stop();
    const load = await loading;
    return {
      samples: samples.length,
      paid: percentiles(samples.map((s) => s.paid)),
      toast: percentiles(samples.map((s) => s.toast)),
      request: percentiles(samples.map((s) => s.request)),
      clientAdds: percentiles(samples.map((s) => s.paid - s.request)),
      beforeRequest: percentiles(samples.map((s) => s.before)),
      afterAnswer: percentiles(samples.map((s) => s.after)),
      relay: { p50: load.latency.p50, p99: load.latency.p99, rps: load.requests.average },
      loadRate: LOAD_RATE,
      idbPut: percentiles(samples.map((s) => s.put)),
      idbDelete: percentiles(samples.map((s) => s.del)),
      workerPut: percentiles(samples.map((s) => s.wput)),
      workerDelete: percentiles(samples.map((s) => s.wdel)),
      fetchHop: percentiles(samples.map((s) => s.fhop)),
      workerHop: percentiles(samples.map((s) => s.whop)),
      xhrHop: percentiles(samples.map((s) => s.xhop)),
      idle: {
        samples: idle.length,
        paid: percentiles(idle.map((s) => s.paid)),
        clientAdds: percentiles(idle.map((s) => s.paid - s.request)),
        beforeRequest: percentiles(idle.map((s) => s.before)),
        afterAnswer: percentiles(idle.map((s) => s.after)),
        idbDelete: percentiles(idle.map((s) => s.del)),
        fetchHop: percentiles(idle.map((s) => s.fhop)),
      },
    };
  } finally {
    await browser.close();
    await stop(demo.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

type DemoWindow = typeof globalThis & {
  game: {
    scene: { isActive(key: string): boolean; getScene(key: string): { show(toast: { achievementId?: string }): void } | null };
    loop: { sleep(): void; wake(): void };
    events: { once(event: string, fn: () => void): void };
    plugins: { get(key: string): { unlock(id: string): string | undefined; on(event: string, fn: (e: { intent: { id: string } }) => void): () => void } };
  };
};

/**
 * In the page: `count` unlocks one after another, each timed to its `reward:paid` and to the frame
 * that drew its toast; after each, the floor: a bare IndexedDB put and delete committed in the page,
 * and the same in a worker. Between the unlocks, so under what the game draws while they run (the
 * demo's level ends after 45 s: the results scene that follows draws far less, and a floor timed
 * after all the unlocks was timed there). `asleep`: the game's loop asleep meanwhile, so the page's
 * main thread is free (no toast is drawn: its time is not taken).
 */
async function unlockSamples({ count, asleep }: { count: number; asleep: boolean }): Promise<Sample[]> {
  const { game } = globalThis as DemoWindow;
  if (asleep) game.loop.sleep();
  // What the browser's own commits cost in this page (no library, no lock, no queue): the intent's
  // put now overlaps its request; its delete is committed before the player is told.
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open('rewardbus-bench-floor', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('kv');
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  const commit = (write: (store: IDBObjectStore) => void) =>
    new Promise<number>((resolve, reject) => {
      const t0 = performance.now();
      const tx = db.transaction('kv', 'readwrite');
      write(tx.objectStore('kv'));
      tx.oncomplete = () => resolve(performance.now() - t0);
      tx.onerror = () => reject(tx.error);
    });
  // The same commits in a worker, timed there: the page's main thread (drawing the game) is not waited for.
  const worker = new Worker(
    URL.createObjectURL(
      new Blob(
        [
          `const open = indexedDB.open('rewardbus-bench-floor-worker', 1);
          open.onupgradeneeded = () => open.result.createObjectStore('kv');
          open.onsuccess = () => {
            const db = open.result;
            const commit = (write) => new Promise((resolve) => {
              const t0 = performance.now();
              const tx = db.transaction('kv', 'readwrite');
              write(tx.objectStore('kv'));
              tx.oncomplete = () => resolve(performance.now() - t0);
            });
            onmessage = async ({ data: key }) => {
              const put = await commit((store) => store.put({ id: key, achievementId: 'bench', createdAt: new Date().toISOString() }, key));
              const del = await commit((store) => store.delete(key));
              postMessage({ put, del });
            };
            postMessage('ready');
          };`,
        ],
        { type: 'text/javascript' },
      ),
    ),
  );
  const fromWorker = () => new Promise<{ put: number; del: number }>((resolve) => (worker.onmessage = (e) => resolve(e.data)));
  await fromWorker();
  const bus = game.plugins.get('rewards');
  const scene = game.scene.getScene('__rewardbus_toasts')!;
  const show = scene.show.bind(scene);
  let shown: (() => void) | undefined;
  // Drawn in the frame after show() (its drawing is a promise already settled, after the first).
  scene.show = (toast) => {
    show(toast);
    if (toast.achievementId === 'bench') queueMicrotask(() => queueMicrotask(() => shown?.()));
  };
  performance.setResourceTimingBufferSize(10_000);
  const out: Sample[] = [];
  for (let i = 0; i < count; i++) {
    performance.clearResourceTimings();
    const t0 = performance.now();
    let id: string | undefined;
    const paid = new Promise<number>((resolve) => {
      const off = bus.on('reward:paid', (e) => {
        if (e.intent.id !== id) return;
        off();
        resolve(performance.now());
      });
    });
    const drawn = asleep
      ? Promise.resolve(Number.NaN)
      : new Promise<number>((resolve) => {
          shown = () => game.events.once('postrender', () => resolve(performance.now()));
        });
    id = bus.unlock('bench');
    const [tPaid, tDrawn] = await Promise.all([paid, drawn]);
    const key = `intent-${i}`;
    const put = await commit((store) => store.put({ id: key, achievementId: 'bench', createdAt: new Date().toISOString() }, key));
    const del = await commit((store) => store.delete(key));
    const inWorker = fromWorker();
    const tw = performance.now();
    worker.postMessage(key);
    const { put: wput, del: wdel } = await inWorker;
    const whop = performance.now() - tw - wput - wdel;
    const tf = performance.now();
    await (await fetch('/v1/health?fetch', { cache: 'no-store' })).text();
    const fetched = performance.now();
    const loaded = await new Promise<number>((resolve) => {
      const x = new XMLHttpRequest();
      x.open('GET', '/v1/health?xhr');
      x.onloadend = () => resolve(performance.now());
      x.send();
    });
    const resources = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
    const claim = resources.find((e) => e.name.includes('/v1/rewards') && e.startTime >= t0);
    const health = resources.find((e) => e.name.includes('/v1/health?fetch') && e.startTime >= tf);
    const xhr = resources.find((e) => e.name.includes('/v1/health?xhr') && e.startTime >= tf);
    out.push({
      paid: tPaid - t0,
      toast: tDrawn - t0,
      request: claim ? claim.responseEnd - claim.startTime : Number.NaN,
      before: claim ? claim.startTime - t0 : Number.NaN,
      after: claim ? tPaid - claim.responseEnd : Number.NaN,
      put,
      del,
      wput,
      wdel,
      fhop: health ? fetched - health.responseEnd : Number.NaN,
      whop,
      xhop: xhr ? loaded - xhr.responseEnd : Number.NaN,
    });
    // A pause between unlocks, as between a player's achievements.
    await new Promise((r) => setTimeout(r, 20 + Math.random() * 30));
  }
  worker.terminate();
  db.close();
  scene.show = show;
  if (asleep) game.loop.wake();
  return out;
}

export function printToastLatency(r: ToastLatency | string) {
  console.log("\nfrom unlock() to the toast: the demo in Chromium, its relay's own process paying other players' claims meanwhile");
  if (typeof r === 'string') return console.log(`  (not measured: ${r})`);
  const f = (p: Percentiles) => `p50 ${p.p50.toFixed(1).padStart(6)} ms   p99 ${p.p99.toFixed(1).padStart(6)} ms`;
  console.log(`  unlock() → reward:paid on the bus            ${f(r.paid)}   (${r.samples} unlocks, one after another)`);
  console.log(`  unlock() → the frame that drew its toast     ${f(r.toast)}`);
  console.log(`  its claim's request, as the browser timed it ${f(r.request)}`);
  console.log(`  what the client adds (paid less its request) ${f(r.clientAdds)}   (aim ≤ 10 ms at p50)`);
  console.log(`    of it, unlock() → the request leaves        ${f(r.beforeRequest)}   (sent as it is stored; the lock and the queue read only when the lock is taken)`);
  console.log(`    of it, the answer → reward:paid            ${f(r.afterAnswer)}   (the intent deleted first)`);
  console.log(`  the relay's claims under the same load       ${f(r.relay)}   (${r.relay.rps.toFixed(0)} claims/s of other players, aimed at ${r.loadRate})`);
  console.log(`  the floor: a bare IndexedDB put, committed   ${f(r.idbPut)}   (the same page and load; the intent goes as it is stored)`);
  console.log(`             its delete, committed            ${f(r.idbDelete)}   (deleted before the player is told)`);
  console.log(`  the same put, committed in a worker          ${f(r.workerPut)}   (IndexedDB's own commit: the rest of the floor waits for the page's main thread)`);
  console.log(`             its delete                       ${f(r.workerDelete)}`);
  console.log(`  one answer reaching the page's code: fetch   ${f(r.fetchHop)}   (a bare fetch's body, read, less its responseEnd: any client waits for one)`);
  console.log(`             an XMLHttpRequest's load         ${f(r.xhrHop)}   (fetch's answer takes more turns of the page: headers, then body)`);
  console.log(`             a worker's message               ${f(r.workerHop)}   (its round trip, less the worker's own time)`);
  console.log(`  the same unlocks, the game's loop asleep (nothing drawn: the page's main thread free; ${r.idle.samples} unlocks)`);
  console.log(`    unlock() → reward:paid on the bus          ${f(r.idle.paid)}`);
  console.log(`    what the client adds                       ${f(r.idle.clientAdds)}   (its own work, apart from waiting for the game's frames)`);
  console.log(`      of it, unlock() → the request leaves      ${f(r.idle.beforeRequest)}`);
  console.log(`      of it, the answer → reward:paid          ${f(r.idle.afterAnswer)}`);
  console.log(`    the floor: a bare delete, committed        ${f(r.idle.idbDelete)}`);
  console.log(`    one answer reaching the page: fetch        ${f(r.idle.fetchHop)}`);
}

if (import.meta.url === `file://${process.argv[1]}`) printToastLatency(await toastLatency());
