import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { describe, it } from 'vitest';
import { createLogger, loadConfig, type RelayConfig } from '../../src/relay/index.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS = join(process.cwd(), 'test-artifacts');

/**
 * Browser tests run in Debian's Chromium. Without one they are skipped, saying how to get it;
 * under CI=true a missing browser fails instead, so CI can never pass without running them.
 */
export function describeInBrowser(name: string, body: () => void) {
  if (existsSync(CHROMIUM)) return describe(name, body);
  const how = `no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`;
  if (process.env.CI === 'true') {
    return describe(name, () =>
      it('needs a browser', () => {
        throw new Error(how);
      }),
    );
  }
  console.warn(`Skipping "${name}": ${how}`);
  return describe.skip(name, body);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** A relay config on an ephemeral port with its own data dir. */
export function testConfig(env: Record<string, string> = {}): RelayConfig {
  return loadConfig({ PORT: '0', RELAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'rewardbus-e2e-')), RELAY_RATE_LIMIT_PER_MINUTE: '0', ...env });
}

/** Log lines written by the relay, for the key-leak checks. */
export function capturedLogger() {
  const lines: string[] = [];
  return { lines, logger: createLogger('debug', { write: (l: string) => void lines.push(l) }) };
}

/** Keeps a screenshot for people to look at (CI keeps test-artifacts/). */
export async function keepScreenshot(page: Page, name: string) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, name) });
}

/** Fails a browser test with what the page itself reported. */
export function watchPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

/** What the plugin fixture's page puts on `window`, for tests to read. */
export type Toast = { text: string; variant: string; achievementId?: string };
export type PluginPageWindow = typeof globalThis & {
  game: { scene: { isActive(key: string): boolean; getScene(key: string): { recent?: Toast[] } | null } };
  TOAST_SCENE_KEY: string;
};

/**
 * The plugin fixture (test/e2e/fixtures/plugin-page.ts), bundled as a game would be, served at
 * `/` beside the relay: pass the result as startServer's `fallback`.
 */
export function pluginPage(): Promise<(request: Request) => Response | undefined> {
  return fixturePage('test/e2e/fixtures/plugin-page.ts');
}

/** A fixture page (an entry under test/e2e/fixtures/), bundled as a game would be, served at `/`: a startServer `fallback`. */
export async function fixturePage(entry: string): Promise<(request: Request) => Response | undefined> {
  const { build } = await import('esbuild');
  const { demoBuild } = await import('../../esbuild.config.mjs');
  const bundle = await build({ ...demoBuild, entryPoints: [entry], minify: false });
  const js = bundle.outputFiles![0]!.text;
  const html = '<!doctype html><body><script type="module" src="/page.js"></script></body>';
  return (request) => {
    const path = new URL(request.url).pathname;
    if (path === '/') return new Response(html, { headers: { 'content-type': 'text/html' } });
    if (path === '/page.js') return new Response(js, { headers: { 'content-type': 'text/javascript' } });
    return undefined;
  };
}

/** The toasts the plugin's scene has shown in a page of the fixture, oldest first. */
export const shownToasts = (page: Page): Promise<Toast[]> =>
  page.evaluate(() => (globalThis as PluginPageWindow).game.scene.getScene((globalThis as PluginPageWindow).TOAST_SCENE_KEY)?.recent ?? []);
