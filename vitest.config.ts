import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// One temporary directory for the run, removed as the run ends: the tests' data directories,
// catalogs, servers and builds go under it (os.tmpdir() reads TMPDIR), so a run leaves none behind
// however a test ends. Open to all (PostgreSQL's server runs as its own user when we are root).
if (!process.env.REWARDBUS_TEST_TMPDIR) {
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-test-run-'));
  chmodSync(dir, 0o1777);
  process.env.REWARDBUS_TEST_TMPDIR = dir;
  process.env.TMPDIR = dir;
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
}

// Three projects, by folder:
// - unit: pure modules in-process (no servers, processes, databases or browsers); seconds in all.
//   `npx vitest --run --project unit` while working.
// - slow: bundlers, browser end-to-end, chaos and many relays: anything past ~10 s.
// - integration: everything else under test/: the relay over real HTTP, SQLite files, PostgreSQL, the CLI.
// Only the projects that may need PostgreSQL name the global setup that starts it (it starts once).
const UNIT = ['test/unit/**/*.test.ts', 'src/**/*.test.ts'];
const WIDE = Math.max(2, availableParallelism() - 1);
const SLOW = ['test/slow/**/*.test.ts', 'test/bundlers/**/*.test.ts', 'test/e2e/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      // Pure and in-process: one thread pool, the modules shared between files (no isolation), so the
      // whole project runs in seconds, not in the time 27 workers take to start.
      { extends: true, test: { name: 'unit', include: UNIT, pool: 'threads', isolate: false, maxWorkers: WIDE } },
      // Two files at a time, whatever the machine (Vitest's default is a core less than it has: one
      // file at a time on two cores, which left them idle half the run while files waited on servers
      // and browsers). The slow files then run one at a time after them: each is a crowd of processes.
      {
        extends: true,
        test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...SLOW], globalSetup: ['test/global-setup.ts'], maxWorkers: WIDE },
      },
      { extends: true, test: { name: 'slow', include: SLOW, globalSetup: ['test/global-setup.ts'], maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
