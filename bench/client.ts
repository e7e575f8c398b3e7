import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { EventEmitter } from 'eventemitter3';
import { BROWSER_TARGETS, sizeBuild } from '../esbuild.config.mjs';
import { createRewardBus, memoryStorage } from '../src/client/index.js';
import { fileStorage } from '../src/client/node.js';
import { startServer } from '../src/node/start-server.js';
import { createLogger, loadConfig } from '../src/relay/index.js';
import type { CatalogResponse } from '../src/wire/relay-api.js';

/**
 * Bytes a game loads up front (the entry and the chunks it imports statically), as the bus
 * starts (and the courier, which every bus loads at once, with its static imports), and on
 * demand (the rest: overlays, toasts, the QR encoder, …).
 */
async function measure(entry: string, target?: string[]) {
  const r = await build(sizeBuild(entry, target));
  const files = new Map(r.outputFiles!.map((f) => [f.path.slice(f.path.indexOf('size-out/')), f.contents]));
  const outputs = r.metafile!.outputs;
  const reach = (from: string, into: Set<string>) => {
    if (into.has(from)) return into;
    into.add(from);
    for (const i of outputs[from]!.imports) if (i.kind === 'import-statement' && outputs[i.path]) reach(i.path, into);
    return into;
  };
  // The game's entry (sizeBuild's stdin); chunks reached by import() have entry points too.
  const upFront = reach(Object.keys(outputs).find((o) => outputs[o]!.entryPoint === 'entry.ts')!, new Set());
  const courier = Object.keys(outputs).find((o) => /\/courier-[^/]*\.js$/.test(outputs[o]!.entryPoint ?? ''));
  const atStart = courier ? reach(courier, new Set(upFront)) : upFront;
  const size = (paths: string[]) => {
    const code = Buffer.concat(paths.map((p) => files.get(p)!));
    return { min: code.length, gzip: gzipSync(code, { level: 9 }).length };
  };
  return { upFront: size([...upFront]), atStart: size([...atStart]), onDemand: size(Object.keys(outputs).filter((o) => !atStart.has(o) && o.endsWith('.js'))) };
}

/** What the packed package costs a game (dist/: `npm run build` first), as a modern and as an old-browser build. */
export async function bundleSizes() {
  const client = await measure("export * from 'rewardbus'");
  const both = await measure("export * from 'rewardbus'; export * from 'rewardbus/phaser'");
  const old = await measure("export * from 'rewardbus'; export * from 'rewardbus/phaser'", BROWSER_TARGETS);
  return [
    { name: 'client, up front', ...client.upFront },
    { name: 'client + Phaser plugin, up front', ...both.upFront },
    { name: 'client + plugin as the bus starts (up front + courier)', ...both.atStart },
    { name: 'on demand (overlays, QR encoder, IndexedDB store, toasts, storage lease, 425 rule)', ...both.onDemand },
    { name: `client + plugin up front, built for ${BROWSER_TARGETS.join(' ')}`, ...old.upFront },
  ];
}

/** Microseconds per call, best of 5 runs of n calls. */
function perCall(n: number, fn: (i: number) => void): number {
  let best = Infinity;
  for (let run = 0; run < 5; run++) {
    const t = performance.now();
    for (let i = 0; i < n; i++) fn(i);
    best = Math.min(best, ((performance.now() - t) * 1000) / n);
  }
  return best;
}

export async function unlockCost() {
  const never = () => new Promise<Response>(() => undefined);
  const bus = createRewardBus({ relayUrl: 'http://127.0.0.1:9', storage: memoryStorage(), fetch: never });
  bus.on('reward:queued', () => undefined);
  // In the game's first frames, before the courier has come (a synchronous loop cannot see it come).
  const beforeCourier = perCall(20_000, () => bus.unlock('first-coin'));
  // Once the bus has started: the courier's unlock().
  await bus.ready;
  const unlock = perCall(20_000, () => bus.unlock('first-coin'));
  bus.destroy();
  // Baseline: what any typed bus pays to tell one listener, with a fresh UUID and timestamp.
  const ee = new EventEmitter<{ e: (x: { id: string; at: string }) => void }>();
  ee.on('e', () => undefined);
  const baseline = perCall(20_000, () => ee.emit('e', { id: crypto.randomUUID(), at: new Date().toISOString() }));
  return { unlock, beforeCourier, baseline };
}

/** One way of draining, one round: its wall time and the CPU the process spent meanwhile. */
export interface DrainFigure {
  ms: number;
  /** All of the process's threads: the client, the relay, its SQLite thread and the embedded sandbox all run in it. */
  cpuMs: number;
}
// The third: the batches again, the queue kept where the package's Node entry keeps it by default
// (fileStorage, a JSON file written whole and synced at each write), so a write per intent shows.
export const DRAIN_WAYS = ['one claim per request, 6 at once', 'in batches of 25', 'in batches of 25, queue in a file'] as const;
export type DrainWay = (typeof DRAIN_WAYS)[number];
export interface DrainTimes {
  /** Each round: every way, one after the other, on a relay of its own. */
  rounds: Array<Record<DrainWay, DrainFigure>>;
  /** The 1-minute load average as the rounds started and as they ended. */
  load: [number, number];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** One round: 1,000 intents of one player queued offline, paid once the relay is back, each way. */
async function drainRound(): Promise<Record<DrainWay, DrainFigure>> {
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-drain-'));
  const catalog = join(dir, 'catalog.json');
  writeFileSync(catalog, JSON.stringify({ achievements: [{ id: 'bench', title: 'Bench', sats: 1, repeat: { kind: 'cooldown', seconds: 0 } }] }));
  const config = loadConfig({
    PORT: '0',
    RELAY_DATA_DIR: dir,
    RELAY_CATALOG: catalog,
    RELAY_USER_DAILY_CAP_SATS: '0',
    RELAY_DAILY_BUDGET_SATS: '0',
    RELAY_RATE_LIMIT_PER_MINUTE: '0',
  });
  const server = await startServer(config, { logger: createLogger('warn', { write: () => undefined }) });
  const results: Partial<Record<DrainWay, DrainFigure>> = {};
  try {
    for (const name of DRAIN_WAYS) {
      const batches = name !== 'one claim per request, 6 at once';
      let offline = true;
      const bus = createRewardBus({
        relayUrl: server.url,
        storage: name === 'in batches of 25, queue in a file' ? fileStorage(join(dir, 'client-queue.json')) : memoryStorage(),
        fetch: async (input, init) => {
          if (offline) throw new TypeError('offline');
          const res = await fetch(input, init);
          if (batches || !String(input).endsWith('/v1/catalog')) return res;
          // A relay without batches: its catalog does not offer them.
          const { claimBatchMax: _, ...body } = (await res.json()) as CatalogResponse;
          return Response.json(body);
        },
      });
      offline = false;
      await bus.link(`drain-${DRAIN_WAYS.indexOf(name)}`);
      offline = true;
      for (let i = 0; i < 1000; i++) bus.unlock('bench');
      await bus.flush();
      offline = false;
      const cpu = process.cpuUsage();
      const t = performance.now();
      await bus.flush();
      const ms = performance.now() - t;
      const used = process.cpuUsage(cpu);
      results[name] = { ms, cpuMs: (used.user + used.system) / 1000 };
      if (bus.pending().length) throw new Error(`${bus.pending().length} intents left`);
      bus.destroy();
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return results as Record<DrainWay, DrainFigure>;
}

/**
 * Time to pay 1,000 intents of one player queued offline once the relay is back: in the batches
 * the relay's catalog offers, and one claim per request, 6 at once (a browser's connections), as
 * against a relay without batches; and the batches again with the queue in a file, as a Node game
 * keeps it by default. A wall-clock figure of a path that is mostly CPU, so it moves
 * with the host as much as with the code: measured in rounds (BENCH_ROUNDS, 3 by default) like
 * the relay's loads, with the CPU each round spent beside its time.
 */
export async function drainTime(rounds = Number(process.env.BENCH_ROUNDS ?? 3)): Promise<DrainTimes> {
  const load = loadavg()[0]!;
  const all: DrainTimes['rounds'] = [];
  for (let r = 0; r < rounds; r++) all.push(await drainRound());
  return { rounds: all, load: [load, loadavg()[0]!] };
}

/** The drain's lines: each way's median over the rounds (time, CPU, rate), each round's time beside, and the ratio the rounds made. */
export function printDrain({ rounds, load }: DrainTimes) {
  const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  console.log(
    'draining 1,000 intents of one player queued offline, through the relay (SQLite, synchronous=FULL) and sandbox' +
      ` (median of ${rounds.length} rounds; load average ${fmt(load[0], 1)} → ${fmt(load[1], 1)} on ${availableParallelism()} cores)`,
  );
  const [base] = DRAIN_WAYS;
  for (const way of DRAIN_WAYS) {
    const ms = median(rounds.map((r) => r[way].ms));
    const cpu = median(rounds.map((r) => r[way].cpuMs));
    // The median of the rounds' ratios: each round's two ways ran seconds apart, on the same host's minute.
    const x = median(rounds.map((r) => r[base].ms / r[way].ms));
    console.log(
      `  ${way.padEnd(34)} ${fmt(ms).padStart(7)} ms   ${fmt((1000 * 1000) / ms).padStart(5)} intents/s   CPU ${fmt(cpu).padStart(6)} ms` +
        `   (${fmt(x, 1)}x)   rounds: ${rounds.map((r) => fmt(r[way].ms)).join(', ')} ms`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) printDrain(await drainTime());
