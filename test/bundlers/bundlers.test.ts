import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/node/start-server.js';
import type { Toast } from '../../src/phaser/index.js';
import { describeInBrowser, launchChromium, testConfig, watchPageErrors } from '../e2e/harness.js';
import { type Bundler, type GameProject, installAlone, makeGame, packClient } from './game-projects.js';

const BUNDLERS: Bundler[] = ['vite', 'webpack', 'esbuild'];
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript' };

let browser: Browser;
let tarball: string;
const games = new Map<Bundler, GameProject>();
let alone: Awaited<ReturnType<typeof installAlone>>;
const servers: RunningServer[] = [];

/** A relay (with its sandbox) that also serves these files, as a game's host would. */
async function serveFiles(files: (path: string) => string | undefined): Promise<RunningServer> {
  const server = await startServer(testConfig(), {
    fallback: (request) => {
      const path = new URL(request.url).pathname;
      const file = files(path === '/' ? '/index.html' : path);
      return file && existsSync(file) ? new Response(readFileSync(file), { headers: { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' } }) : undefined;
    },
  });
  servers.push(server);
  return server;
}
const under = (dir: string) => (path: string) => join(dir, normalize(path).replace(/^(\.\.[/\\])+/, ''));

type GameWindow = typeof globalThis & { game: { scene: { getScene(key: string): { recent?: Toast[] } | null } } };

/** Opens the game and waits for the payout toast; returns the page errors seen on the way. */
async function playUntilPaid(url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await (await browser.newContext()).newPage();
  const errors = watchPageErrors(page);
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(url);
  await page.waitForFunction(
    () => ((globalThis as GameWindow).game?.scene.getScene('__rewardbus_toasts')?.recent ?? []).some((t) => t.variant === 'paid' && t.achievementId === 'first-coin'),
    undefined,
    { timeout: 20_000, polling: 100 },
  );
  return { page, errors };
}

describeInBrowser('a game from each Phaser template, with rewardbus from the packed tarball', () => {
  beforeAll(async () => {
    const root = mkdtempSync(join(tmpdir(), 'rewardbus-games-'));
    tarball = await packClient(root);
    [alone] = await Promise.all([installAlone(tarball), ...BUNDLERS.map(async (b) => games.set(b, await makeGame(b, tarball, root)))]);
    browser = await launchChromium();
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all(servers.map((s) => s.close()));
  });

  it('installs into a game with no server package, no native build and no install script', () => {
    expect(alone.packages.sort()).toEqual(['eventemitter3', 'rewardbus']);
    expect(alone.output).not.toMatch(/install-scripts|gyp/);
    console.log(`npm install rewardbus: ${alone.packages.length} packages in ${alone.ms} ms`);
  });

  for (const bundler of BUNDLERS) {
    it(`builds with the ${bundler} template's own build command, unchanged`, () => {
      const game = games.get(bundler)!;
      expect(game.build.output).not.toMatch(/node:fs|node:path|destructuring|UnhandledSchemeError|Could not resolve/);
      // Nor a warning about the package.
      expect(game.build.output).not.toMatch(/WARN[\s\S]{0,400}node_modules\/rewardbus/i);
      expect(game.build.code).toBe(0);
      const dist = join(game.dir, 'dist');
      const scripts = readdirSync(dist, { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('.js'));
      expect(scripts.length).toBeGreaterThan(0);
      for (const f of scripts) expect(readFileSync(join(dist, f), 'utf8')).not.toMatch(/["']node:(fs|path)/);
    });

    it(`runs the ${bundler} build in Chromium: links, pays once, and shows the toast`, async () => {
      const game = games.get(bundler)!;
      expect(game.build.code).toBe(0);
      const server = await serveFiles(under(join(game.dir, 'dist')));
      const { errors } = await playUntilPaid(`${server.url}/?gamertag=${bundler}-player`);
      expect(errors).toEqual([]);
      expect(server.sandbox!.payments().filter((p) => p.gamertag === `${bundler}-player`)).toHaveLength(1);
    });
  }

  it('builds with plain `esbuild src/main.ts --bundle` (platform browser, no config)', async () => {
    const game = games.get('esbuild')!;
    const { stderr } = await promisify(execFile)(join(game.dir, 'node_modules/.bin/esbuild'), ['src/main.ts', '--bundle', '--outfile=plain/main.js', '--log-level=warning'], {
      cwd: game.dir,
    });
    expect(stderr).not.toMatch(/error/i);
    expect(readFileSync(join(game.dir, 'plain/main.js'), 'utf8')).not.toMatch(/["']node:(fs|path)/);
  });

  it("the game's `npx rewardbus start` says where the relay is; the relay package's own command runs", async () => {
    const game = games.get('vite')!;
    const forward = await promisify(execFile)(join(game.dir, 'node_modules/.bin/rewardbus'), ['start']).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(forward.code).toBe(2);
    expect(forward.stderr).toContain('npx @rewardbus/relay start');
    const relayPackage = JSON.parse(readFileSync('packages/relay/package.json', 'utf8')) as { version: string; bin: Record<string, string> };
    const bin = join('packages/relay', relayPackage.bin['rewardbus-relay']!);
    const { stdout } = await promisify(execFile)(process.execPath, [bin, '--version']);
    expect(stdout.trim()).toBe(relayPackage.version);
  });

  it('the script-tag build serves other engines without Phaser, and Phaser games with the plugin', async () => {
    const game = games.get('vite')!;
    const modules = join(game.dir, 'node_modules');
    const pages: Record<string, string> = {
      'alone.html': `<script src="/rewardbus.iife.js"></script><script>
        const bus = RewardBus.createRewardBus({ relayUrl: location.origin });
        bus.on('reward:paid', (o) => { document.title = 'paid ' + o.sats; });
        bus.link('iife-alone').then(() => bus.unlock('first-coin'));
      </script>`,
      'phaser.html': `<div id="game-container"></div><script src="/phaser.min.js"></script><script src="/rewardbus.iife.js"></script><script>
        window.game = new Phaser.Game({ type: Phaser.AUTO, width: 320, height: 200, parent: 'game-container',
          scene: { key: 'boot', create() { this.rewards.link('iife-phaser').then(() => this.rewards.unlock('first-coin')); } },
          plugins: { global: [{ key: 'rewards', plugin: RewardBus.RewardBusPlugin, start: true, mapping: 'rewards', data: { relayUrl: location.origin } }] } });
      </script>`,
    };
    for (const [name, html] of Object.entries(pages)) writeFileSync(join(game.dir, name), html);
    const server = await serveFiles((path) =>
      path === '/rewardbus.iife.js'
        ? join(modules, 'rewardbus/dist/rewardbus.iife.js')
        : path === '/phaser.min.js'
          ? join(modules, 'phaser/dist/phaser.min.js')
          : join(game.dir, path),
    );
    const page = await (await browser.newContext()).newPage();
    const errors = watchPageErrors(page);
    await page.goto(`${server.url}/alone.html`);
    await page.waitForFunction(() => document.title === 'paid 21', undefined, { timeout: 20_000, polling: 100 });
    expect(errors).toEqual([]);
    await playUntilPaid(`${server.url}/phaser.html`);
  });
});
