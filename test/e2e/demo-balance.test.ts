import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDemo } from '../../demo/serve.js';
import type { RunningServer } from '../../src/node/start-server.js';
import type { Toast } from '../../src/phaser/index.js';
import { describeInBrowser, keepScreenshot, launchChromium, testConfig, watchPageErrors } from './harness.js';

let server: RunningServer;
let browser: Browser;

type Badge = { text: string; button: { getBounds(): { centerX: number; centerY: number } } };
type DemoWindow = typeof globalThis & {
  game: { scene: { getScene(key: string): ({ recent?: Toast[] } & Partial<Badge>) | null; isActive(key: string): boolean } };
};

const toastSaid = (page: Page, text: string | RegExp) =>
  page.waitForFunction(
    ([source, flags]) => {
      const re = new RegExp(source!, flags);
      return ((globalThis as DemoWindow).game.scene.getScene('__rewardbus_toasts')?.recent ?? []).some((t) => re.test(t.text));
    },
    typeof text === 'string' ? [`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, ''] : [text.source, text.flags],
  );
const badgeText = (page: Page) => page.evaluate(() => (globalThis as DemoWindow).game.scene.getScene('__rewardbus_balance')?.text ?? '');

/** Clicks the balance badge's Withdraw button on the canvas, where the player would. */
async function clickWithdraw(page: Page) {
  const at = await page.evaluate(() => {
    // A Rectangle's centre is a getter: read it here, where the object is.
    const b = (globalThis as DemoWindow).game.scene.getScene('__rewardbus_balance')!.button!.getBounds();
    return { centerX: b.centerX, centerY: b.centerY };
  });
  const box = (await page.locator('#game canvas').boundingBox())!;
  await page.mouse.click(box.x + (at.centerX * box.width) / 800, box.y + (at.centerY * box.height) / 600);
}

describeInBrowser('the demo in balance mode (npm start -- --payout balance), in a real browser', () => {
  beforeAll(async () => {
    server = await startDemo(testConfig({ RELAY_PAYOUT_MODE: 'balance', RELAY_MIN_WITHDRAWAL_SATS: '20' }));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('plays as a guest, toasts each credit with the balance, claims the sats with a gamertag, and withdraws them', async () => {
    const context = await browser.newContext({ viewport: { width: 1180, height: 640 } });
    const page = await context.newPage();
    const errors = watchPageErrors(page);
    const heartbeats: string[] = [];
    page.on('request', (r) => r.method() === 'POST' && r.url().endsWith('/v1/play') && heartbeats.push(r.url()));
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => (globalThis as DemoWindow).game?.scene.isActive('title'));
    // No gamertag: the demo plays as a guest.
    await page.waitForSelector('#gamertag[placeholder="gamertag (optional)"]');
    await page.click('#login button');
    await page.waitForFunction(() => (globalThis as DemoWindow).game.scene.isActive('play'));
    await toastSaid(page, 'Day 1 streak · +10 sats · balance 10');
    await page.waitForSelector('#player:text("Playing as a guest")');
    // The visible page sends heartbeats as soon as there is a guest (witnessed play, for the withdrawal allowance).
    await expect.poll(() => heartbeats.length).toBeGreaterThan(0);

    const box = (await page.locator('#game canvas').boundingBox())!;
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await toastSaid(page, /^\+21 sats · First coin · balance (21|31)$/);
    await expect.poll(() => badgeText(page)).toBe('31 sats');
    // A guest cannot withdraw: the relay pays a gamertag.
    expect(server.sandbox!.payments()).toEqual([]);
    // The guest is kept across a reload, with its balance.
    await page.reload();
    await page.waitForFunction(() => (globalThis as DemoWindow).game?.scene.isActive('title'));
    await page.waitForSelector('#player:text("Playing as a guest")');
    await expect.poll(() => badgeText(page)).toBe('31 sats');

    await page.fill('#claim-gamertag', 'ada');
    await page.click('#claim-sats button');
    await toastSaid(page, 'Claimed 31 sats as ada');
    await page.waitForSelector('#player:text("Playing as ada")');
    await keepScreenshot(page, 'demo-balance-claimed.png');

    await clickWithdraw(page);
    await toastSaid(page, 'Withdrew 31 sats → ada');
    await expect.poll(() => badgeText(page)).toBe('0 sats');
    expect(server.sandbox!.payments().map((p) => ({ gamertag: p.gamertag, msats: p.amount }))).toEqual([{ gamertag: 'ada', msats: '31000' }]);
    await keepScreenshot(page, 'demo-balance-withdrawn.png');
    expect(errors).toEqual([]);
    await context.close();
  });
});
