import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// What `npm pack` (and so `npm publish`) puts in each package, from a tree with no build in it:
// the prepack scripts build, so a pack is never empty, and each package ships its own files only.

const exec = promisify(execFile);

interface Manifest {
  bin?: Record<string, string>;
  exports?: unknown;
  types?: string;
  unpkg?: string;
}

/** A copy of this repository's files as git sees them (committed or not, nothing ignored): no build. */
async function copyRepository(into: string): Promise<void> {
  const { stdout } = await exec('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard']);
  for (const file of stdout.split('\0').filter(Boolean)) {
    if (file === 'node_modules' || !existsSync(file)) continue;
    mkdirSync(dirname(join(into, file)), { recursive: true });
    cpSync(file, join(into, file));
  }
  symlinkSync(resolve('node_modules'), join(into, 'node_modules'));
}

/** `npm pack --dry-run --json` in dir: the paths it would pack. Its prepack's output comes first on stdout. */
async function packed(dir: string, options: string[] = []): Promise<string[]> {
  const { stdout } = await exec('npm', ['pack', '--dry-run', '--json', ...options], { cwd: dir, maxBuffer: 64 * 1024 * 1024, timeout: 240_000 });
  const json = stdout.slice(stdout.search(/^\[$/m));
  return (JSON.parse(json) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
}

/** Every file a manifest points at in dist/: its bin, exports (all conditions), types and unpkg. */
function entryPoints(manifest: Manifest): string[] {
  const all: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') all.push(v);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk([manifest.bin, manifest.exports, manifest.types, manifest.unpkg]);
  return [...new Set(all.filter((p) => p.startsWith('./dist/')).map((p) => p.slice(2)))].sort();
}

describe('the packs', () => {
  it('build from a clean tree and hold every entry point; the client ships no relay files', { timeout: 600_000 }, async () => {
    const tree = mkdtempSync(join(tmpdir(), 'rewardbus-pack-'));
    try {
      await copyRepository(tree);
      expect(existsSync(join(tree, 'dist'))).toBe(false);
      expect(existsSync(join(tree, 'packages/relay/dist'))).toBe(false);

      // The relay's package first, from the clean tree: its own prepack builds (the repository's build, both packages).
      const relayDir = join(tree, 'packages/relay');
      const relay = await packed(relayDir);
      const relayEntries = entryPoints(JSON.parse(readFileSync(join(relayDir, 'package.json'), 'utf8')) as Manifest);
      expect(relayEntries).toContain('dist/relay/index.js');
      // Found by path at run time, not through the manifest: the SQLite store's thread.
      for (const entry of [...relayEntries, 'dist/relay/sqlite-worker.js']) expect(relay, entry).toContain(entry);
      for (const file of [
        '.env.example',
        'docs/relay-api.md',
        'docs/admin-api.md',
        'docs/deploy.md',
        'docs/deploy/nginx.conf',
        'docs/deploy/rewardbus-relay.service',
        'docs/configuration.md',
        'LICENSE',
        'README.md',
      ])
        expect(relay, file).toContain(file);

      // The client's prepack is that same build (`npm run build`, which the relay's prepack ran above):
      // its pack is checked on that build rather than on a third run of it.
      const manifest = JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8')) as Manifest & { scripts: Record<string, string> };
      expect(manifest.scripts.prepack).toBe('npm run build');
      expect(JSON.parse(readFileSync(join(relayDir, 'package.json'), 'utf8')).scripts.prepack).toBe('npm --prefix ../.. run build');
      const client = await packed(tree, ['--ignore-scripts']);
      const clientEntries = entryPoints(manifest);
      expect(clientEntries).toContain('dist/client/index.js');
      expect(clientEntries).toContain('dist/bin/rewardbus.js');
      for (const entry of clientEntries) expect(client, entry).toContain(entry);
      expect(client.filter((f) => f === '.env.example' || f.startsWith('docs/') || f.startsWith('src/'))).toEqual([]);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });
});
