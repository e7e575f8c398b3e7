import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

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
