// Builds the two packages (`npm run build`):
// - rewardbus (dist/): the client and the Phaser plugin for browsers (ESM, and an IIFE for
//   script tags), the client's Node entry, and a `rewardbus` command that points at the relay;
// - @rewardbus/relay (packages/relay/dist/): the relay, the sandbox and their CLI, for Node.
// The demo's build is demoBuild, used by `npm start`. `node esbuild.config.mjs`

import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { transformAsync } from '@babel/core';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const relayPkg = JSON.parse(readFileSync(new URL('./packages/relay/package.json', import.meta.url), 'utf8'));

/**
 * The oldest browsers Phaser's official templates build for (template-esbuild's target list).
 * A game's bundler lowers our ES2022 to them, all but destructuring, which esbuild cannot lower
 * (Edge 16's is incomplete): so the package ships none (Babel takes it out, lowerDestructuring).
 * The script-tag build, which no bundler sees, is lowered to these targets itself.
 */
export const BROWSER_TARGETS = ['chrome58', 'edge16', 'firefox57', 'safari11'];
const moduleSyntax = { target: 'es2022' };
// `import()` stays as it is: lowered, it would become a require(), which no browser can run.
const scriptSyntax = { target: BROWSER_TARGETS, supported: { destructuring: true, 'dynamic-import': true } };

/** Rewrites destructuring as plain property reads, the one thing esbuild leaves for these targets. */
export async function lowerDestructuring(code) {
  const out = await transformAsync(code, {
    configFile: false,
    babelrc: false,
    compact: false,
    sourceType: 'module',
    plugins: ['@babel/plugin-transform-parameters', '@babel/plugin-transform-destructuring'],
    // Our code destructures arrays and plain objects only: no iterator protocol, no symbol keys.
    assumptions: { iterableIsArray: true, objectRestNoSymbols: true, ignoreFunctionLength: true },
  });
  return out.code;
}

/** Builds in memory, takes destructuring out of every script, then writes. */
async function buildForBrowsers(options) {
  const result = await build({ ...options, write: false });
  for (const file of result.outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.path.endsWith('.js') ? await lowerDestructuring(file.text) : file.contents);
  }
  return result;
}

/**
 * Script-tag users have Phaser as a global: the IIFE takes it from there. Without Phaser (another
 * engine) the plugin's base classes are empty stand-ins, so the client still loads.
 */
const phaserGlobal = {
  name: 'phaser-global',
  setup(b) {
    b.onResolve({ filter: /^phaser$/ }, () => ({ path: 'phaser', namespace: 'phaser-global' }));
    b.onLoad({ filter: /.*/, namespace: 'phaser-global' }, () => ({
      contents: 'module.exports = globalThis.Phaser || { Plugins: { BasePlugin: class {} }, Scene: class {} }',
      loader: 'js',
    }));
  },
};

/**
 * The client package for browsers and Node: ESM, shared code in chunks. Only eventemitter3
 * (whose types the bus extends) and Phaser stay external; idb-keyval and the QR encoder are
 * bundled, so the browser code holds nothing a game's bundler must lower further.
 */
export const clientBuild = {
  ...moduleSyntax,
  entryPoints: { 'client/index': 'src/client/index.ts', 'client/node': 'src/client/node.ts', 'phaser/index': 'src/phaser/index.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  // The Node entry's file store loads node:fs when used; no browser entry reaches it.
  external: ['node:*', ...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})],
  logLevel: 'warning',
};

/** `<script src="rewardbus.iife.js">` (after Phaser's, for the plugin): `RewardBus.createRewardBus`, `RewardBus.RewardBusPlugin`. */
export const iifeBuild = {
  ...scriptSyntax,
  entryPoints: ['src/iife.ts'],
  outfile: 'dist/rewardbus.iife.js',
  bundle: true,
  minify: true,
  format: 'iife',
  globalName: 'RewardBus',
  platform: 'browser',
  plugins: [phaserGlobal],
  logLevel: 'warning',
};

/** The client package's `rewardbus` command: it points at the relay's package. */
export const forwardBuild = {
  entryPoints: { 'bin/rewardbus': 'src/bin/forward-to-relay.ts' },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  external: ['@rewardbus/relay', '@rewardbus/relay/*'],
  logLevel: 'warning',
};

/** @rewardbus/relay: one ESM file per entry, for Node 20, its dependencies left to npm. */
export const relayBuild = {
  // The SQLite store's thread is an entry of its own, beside relay/index (sqlite-store.ts finds it there).
  entryPoints: {
    'relay/index': 'src/relay/index.ts',
    'relay/sqlite-worker': 'src/relay/store/sqlite/worker.ts',
    'sandbox/index': 'src/sandbox/index.ts',
    'bin/rewardbus': 'src/bin/rewardbus.ts',
  },
  outdir: 'packages/relay/dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  external: Object.keys(relayPkg.dependencies),
  logLevel: 'warning',
};

/** The operator's page script, for browsers, beside its HTML (src/relay/http/admin/assets.ts reads both). */
export const adminBuild = {
  entryPoints: { 'relay/admin/app': 'src/relay/http/admin/app.ts' },
  outdir: 'packages/relay/dist',
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2020',
  logLevel: 'warning',
};

/** What the relay's package ships beside its code, from the one copy in this repository. */
export const RELAY_PACKAGE_FILES = [
  ['src/relay/http/admin/page.html', 'packages/relay/dist/relay/admin/page.html'],
  ['LICENSE', 'packages/relay/LICENSE'],
  ['.env.example', 'packages/relay/.env.example'],
  ['docs/relay-api.md', 'packages/relay/docs/relay-api.md'],
  ['docs/admin-api.md', 'packages/relay/docs/admin-api.md'],
  ['docs/deploy.md', 'packages/relay/docs/deploy.md'],
  ['docs/deploy/nginx.conf', 'packages/relay/docs/deploy/nginx.conf'],
  ['docs/deploy/rewardbus-relay.service', 'packages/relay/docs/deploy/rewardbus-relay.service'],
  // Named by the relay's --help and .env.example (test/unit/docs/links.test.ts): an installed relay's operator has no clone to read them in.
  ['docs/configuration.md', 'packages/relay/docs/configuration.md'],
  ['docs/balance.md', 'packages/relay/docs/balance.md'],
  ['docs/threat-model.md', 'packages/relay/docs/threat-model.md'],
  ['docs/unlock-proofs.md', 'packages/relay/docs/unlock-proofs.md'],
  ['docs/sandbox.md', 'packages/relay/docs/sandbox.md'],
  ['docs/service-facts.md', 'packages/relay/docs/service-facts.md'],
];

/**
 * What a game pays for up front: client (+ plugin) as the package ships it (dist/, so run the
 * build first), minified with its dependencies for `target`, Phaser left out. Split as a game's bundler would:
 * what loads on demand (overlays, QR encoder, IndexedDB store, toasts, ...) lands in chunks of its own,
 * which the bench counts apart.
 */
export const sizeBuild = (entry, target = 'es2022') => ({
  stdin: { contents: entry, resolveDir: new URL('.', import.meta.url).pathname, loader: 'ts', sourcefile: 'entry.ts' },
  bundle: true,
  minify: true,
  splitting: true,
  outdir: 'size-out',
  format: 'esm',
  platform: 'browser',
  target,
  external: ['phaser'],
  metafile: true,
  logOverride: { 'ignored-bare-import': 'silent' },
  write: false,
  logLevel: 'warning',
});

/**
 * The demo game, bundled with Phaser; it imports rewardbus by its package name, as a game would.
 * One file (on-demand parts inlined), served from memory by `npm start`.
 */
export const demoBuild = {
  entryPoints: ['demo/main.ts'],
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  conditions: ['rewardbus-source'],
  write: false,
  outfile: 'demo/dist/main.js',
  logLevel: 'warning',
};

if (import.meta.url === `file://${process.argv[1]}`) {
  // Chunk names carry hashes: clear out the last build's, or they would be packed too.
  for (const dir of ['dist', 'packages/relay/dist']) rmSync(dir, { recursive: true, force: true });
  await Promise.all([buildForBrowsers(clientBuild), buildForBrowsers(iifeBuild), build(forwardBuild), build(relayBuild), build(adminBuild)]);
  for (const [from, to] of RELAY_PACKAGE_FILES) {
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(from, to);
  }
}
