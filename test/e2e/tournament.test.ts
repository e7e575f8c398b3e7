// A tournament in the browser (issue 37): demo/tournament.ts posts the day's high scores as the
// game's server would; the winner's open game hears the prize on its event stream and toasts it,
// "🏆 1st place · Daily high score · +300 sats"; the prize is paid once, however often it posts.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEMO_CATALOG, DEMO_GAME_SERVER_SECRET } from '../../demo/game-server.js';
import { startDemo } from '../../demo/serve.js';
import type { RunningServer } from '../../src/node/start-server.js';
import type { Toast } from '../../src/phaser/index.js';
import { capturedLogger, describeInBrowser, keepScreenshot, launchChromium, testConfig, watchPageErrors } from './harness.js';

const run = promisify(execFile);
let server: RunningServer;
let browser: Browser;

type DemoWindow = typeof globalThis & {
  game: { scene: { getScene(key: string): { recent?: Toast[] } | null; isActive(key: string): boolean } };
};
const toasts = (page: import('playwright-core').Page) => page.evaluate(() => (globalThis as DemoWindow).game.scene.getScene('__rewardbus_toasts')?.recent ?? []);

describeInBrowser('a tournament posted by the game server, in the browser', () => {
  beforeAll(async () => {
    server = await startDemo(testConfig({ RELAY_CATALOG: DEMO_CATALOG, RELAY_GAME_SERVER_SECRET: DEMO_GAME_SERVER_SECRET }), { logger: capturedLogger().logger });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("toasts the prize in the winner's game; posting again pays nothing more", { timeout: 90_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1180, height: 640 } });
    const page = await context.newPage();
    const errors = watchPageErrors(page);
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => (globalThis as DemoWindow).game?.scene.isActive('title'));
    await page.fill('#gamertag', 'ada');
    await page.click('#login button');
    await page.waitForFunction(() => (globalThis as DemoWindow).game.scene.isActive('play'));
    // The runner-up linked elsewhere.
    const bob = await fetch(`${server.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag: 'bob' }) });
    expect(bob.status).toBe(201);

    const post = () =>
      run(process.execPath, ['--import', 'tsx', 'demo/tournament.ts', 'bob:800', 'ada:1200'], {
        env: { ...process.env, RELAY_URL: server.url, RELAY_GAME_SERVER_SECRET: DEMO_GAME_SERVER_SECRET },
      });
    expect((await post()).stdout).toMatch(/daily-high-score \d{4}-\d{2}-\d{2}:\n {2}1\. \S+ {2}300 sats/);
    const said = '🏆 1st place · Daily high score · +300 sats';
    await page.waitForFunction((text) => ((globalThis as DemoWindow).game.scene.getScene('__rewardbus_toasts')?.recent ?? []).some((t) => t.text === text), said);
    await page.waitForTimeout(300); // the toast's fade-in, for the picture
    await keepScreenshot(page, 'tournament-prize-toast.png');
    expect((await toasts(page)).filter((t) => t.text === said)).toHaveLength(1);
    const prizes = () => server.sandbox!.payments().filter((p) => p.comment.startsWith('Daily high score'));
    await expect.poll(() => prizes().length).toBe(2);
    expect(prizes().map((p) => [p.gamertag, Number(p.amount) / 1000])).toEqual(
      expect.arrayContaining([
        ['ada', 300],
        ['bob', 200],
      ]),
    );
    await post();
    expect(prizes()).toHaveLength(2);
    expect(errors).toEqual([]);
    await context.close();
  });
});
