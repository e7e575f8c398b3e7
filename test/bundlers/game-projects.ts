// Fresh game projects, as a developer makes them from Phaser's official templates, with rewardbus
// installed from the packed tarball: built once per test run, with each template's own command.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const GAMES = resolve('test/bundlers/games');
const NPM_INSTALL = ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

export type Bundler = 'vite' | 'webpack' | 'esbuild';

export interface GameProject {
  bundler: Bundler;
  dir: string;
  /** The template's build command's exit code and output. */
  build: { code: number; output: string };
}

async function run(cmd: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  try {
    const r = await exec(cmd, args, { cwd, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, output: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string; message: string };
    return { code: typeof e.code === 'number' ? e.code : 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}` };
  }
}

/** Builds dist/ and packs the client package as npm would publish it. Returns the tarball's path. */
export async function packClient(into: string): Promise<string> {
  const build = await run('npm', ['run', 'build'], process.cwd());
  if (build.code !== 0) throw new Error(`npm run build failed:\n${build.output}`);
  const { stdout } = await exec('npm', ['pack', '--silent', '--pack-destination', into]);
  return join(into, stdout.trim().split('\n').pop()!);
}

/** A template-shaped game with rewardbus from the tarball: installed, then built with its own build script. */
export async function makeGame(bundler: Bundler, tarball: string, root: string): Promise<GameProject> {
  const dir = join(root, bundler);
  cpSync(join(GAMES, bundler), dir, { recursive: true });
  mkdirSync(join(dir, 'src'), { recursive: true });
  if (bundler === 'webpack') cpSync(join(dir, 'main.js'), join(dir, 'src/main.js'));
  else cpSync(join(GAMES, 'shared/main.ts'), join(dir, 'src/main.ts'));
  const script = { vite: '<script type="module" src="./src/main.ts"></script>', webpack: '', esbuild: '<script src="bundle.min.js"></script>' }[bundler];
  writeFileSync(join(dir, 'index.html'), readFileSync(join(GAMES, 'shared/index.html'), 'utf8').replace('<!-- GAME_SCRIPT -->', script));
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  manifest.dependencies.rewardbus = `file:${tarball}`;
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  const install = await run('npm', NPM_INSTALL, dir);
  if (install.code !== 0) throw new Error(`npm install in the ${bundler} game failed:\n${install.output}`);
  return { bundler, dir, build: await run('npm', ['run', 'build'], dir) };
}

/** What `npm install rewardbus` brings into an empty project: packages, time, install scripts. */
export async function installAlone(tarball: string): Promise<{ packages: string[]; ms: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'rewardbus-install-'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'empty-game', private: true }));
  const t = performance.now();
  const r = await run('npm', [...NPM_INSTALL.filter((a) => a !== '--loglevel=error'), tarball], dir);
  const ms = Math.round(performance.now() - t);
  if (r.code !== 0) throw new Error(`npm install ${tarball} failed:\n${r.output}`);
  const modules = join(dir, 'node_modules');
  const packages = readdirSync(modules)
    .filter((n) => !n.startsWith('.'))
    .flatMap((n) => (n.startsWith('@') ? readdirSync(join(modules, n)).map((m) => `${n}/${m}`) : [n]));
  return { packages, ms, output: r.output };
}
