// Builds dist/: the relay, sandbox and CLI for Node (dependencies stay external), and the
// client bundles for browsers (added with the client). `node esbuild.config.mjs`
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const external = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})];

/** Server side: one ESM file per entry, for Node 20. */
export const serverBuild = {
  entryPoints: { 'relay/index': 'src/relay/index.ts', 'sandbox/index': 'src/sandbox/index.ts', 'bin/rewardbus': 'src/bin/rewardbus.ts' },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  external,
  logLevel: 'warning',
};

export const builds = [serverBuild];

if (import.meta.url === `file://${process.argv[1]}`) {
  await Promise.all(builds.map((b) => build(b)));
}
