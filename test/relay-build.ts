// The relay's package built once for a test run, for the tests that start its command in a
// process of their own: a built command starts on 0.6 s of CPU where the source through tsx takes
// 2 s, and the suite starts it well over a hundred times. Built from this checkout's source, the
// way `npm run build` lays out @rewardbus/relay, so each test still runs the code under test.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { adminBuild, RELAY_PACKAGE_FILES, relayBuild } from '../esbuild.config.mjs';

/** Builds into a folder beside the project's dependencies (the build's imports resolve there); returns it. */
export async function buildRelayForTests(): Promise<string> {
  const dir = join(process.cwd(), 'node_modules', '.cache', 'rewardbus', `test-relay-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  await Promise.all([build({ ...relayBuild, outdir: dir }), build({ ...adminBuild, outdir: dir })]);
  for (const [from, to] of RELAY_PACKAGE_FILES) {
    if (!to.startsWith('packages/relay/dist/')) continue;
    const target = join(dir, to.slice('packages/relay/dist/'.length));
    mkdirSync(join(target, '..'), { recursive: true });
    copyFileSync(from, target);
  }
  return dir;
}
