// Run from source (tests, `npm run relay`), the store's thread is worker.ts bundled by esbuild once
// per process. Registering tsx in every new thread instead cost about 0.5 s of CPU per store
// opened, and the tests open hundreds. The built relay never comes here: its worker is built.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

type Esbuild = typeof import('esbuild');

let bundled: URL | undefined;

/** The bundle's file, named by its content (so processes building the same source share it). */
export function sourceWorker(entry: URL): URL {
  if (bundled) return bundled;
  const esbuild = createRequire(import.meta.url)('esbuild') as Esbuild;
  const { outputFiles } = esbuild.buildSync({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  const code = outputFiles[0]!.contents;
  // Beside the project's dependencies, so that the bundle's imports (better-sqlite3) resolve there.
  const dir = new URL('../../../../node_modules/.cache/rewardbus/', import.meta.url);
  const file = new URL(`sqlite-worker-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`, dir);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    // Written whole, then renamed: another process may be reading the same name.
    const partial = new URL(`${file.pathname.split('/').pop()}.${process.pid}.partial`, dir);
    writeFileSync(partial, code);
    renameSync(partial, file);
  }
  bundled = file;
  return file;
}
