// Builds dist/ (`npm run build`): the client and Phaser plugin for browsers and Node (ESM, plus
// an IIFE for script tags), and the relay, sandbox and CLI for Node. The demo's build is
// demoBuild, used by `npm start`. `node esbuild.config.mjs`
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const dependencies = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})];

// The Node file store loads node:fs only when used; browser bundles leave that import alone.
const browserSafe = { external: ['node:*'], platform: 'neutral', mainFields: ['module', 'main'], target: 'es2022' };

/** Script-tag users have Phaser as a global: the IIFE takes it from there. */
const phaserGlobal = {
  name: 'phaser-global',
  setup(b) {
    b.onResolve({ filter: /^phaser$/ }, () => ({ path: 'phaser', namespace: 'phaser-global' }));
    b.onLoad({ filter: /.*/, namespace: 'phaser-global' }, () => ({ contents: 'module.exports = globalThis.Phaser', loader: 'js' }));
  },
};

/** The package's client side: ESM, dependencies left to the user's bundler, shared code in one chunk. */
export const clientBuild = {
  ...browserSafe,
  entryPoints: { 'client/index': 'src/client/index.ts', 'phaser/index': 'src/phaser/index.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  external: [...browserSafe.external, ...dependencies],
  logLevel: 'warning',
};

/** `<script src="rewardbus.iife.js">` after Phaser's: `RewardBus.createRewardBus`, `RewardBus.RewardBusPlugin`. */
export const iifeBuild = {
  ...browserSafe,
  entryPoints: ['src/iife.ts'],
  outfile: 'dist/rewardbus.iife.js',
  bundle: true,
  minify: true,
  format: 'iife',
  globalName: 'RewardBus',
  plugins: [phaserGlobal],
  logLevel: 'warning',
};

/** Server side: one ESM file per entry, for Node 20. */
export const serverBuild = {
  entryPoints: { 'relay/index': 'src/relay/index.ts', 'sandbox/index': 'src/sandbox/index.ts', 'bin/rewardbus': 'src/bin/rewardbus.ts' },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  external: dependencies,
  logLevel: 'warning',
};

/**
 * What a game pays for up front: client (+ plugin), minified with its dependencies, Phaser left
 * out. Split as a game's bundler would: what loads on demand (overlays, QR encoder, the Node file
 * store) lands in chunks of its own, which the bench counts apart.
 */
export const sizeBuild = (entry) => ({
  ...browserSafe,
  stdin: { contents: entry, resolveDir: new URL('.', import.meta.url).pathname, loader: 'ts', sourcefile: 'entry.ts' },
  bundle: true,
  minify: true,
  splitting: true,
  outdir: 'size-out',
  format: 'esm',
  conditions: ['rewardbus-source'],
  external: [...browserSafe.external, 'phaser'],
  metafile: true,
  write: false,
  logLevel: 'warning',
});

/**
 * The demo game, bundled with Phaser; it imports rewardbus by its package name, as a game would.
 * One file (on-demand parts inlined), served from memory by `npm start`.
 */
export const demoBuild = {
  ...browserSafe,
  platform: 'browser',
  entryPoints: ['demo/main.ts'],
  bundle: true,
  minify: true,
  format: 'esm',
  conditions: ['rewardbus-source'],
  write: false,
  outfile: 'demo/dist/main.js',
  logLevel: 'warning',
};

export const builds = [clientBuild, iifeBuild, serverBuild];

if (import.meta.url === `file://${process.argv[1]}`) {
  await Promise.all(builds.map((b) => build(b)));
}
