import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDemo } from '../../demo/serve.js';
import type { RunningServer } from '../../src/bin/serve.js';
import type { Toast } from '../../src/phaser/index.js';
import { capturedLogger, describeInBrowser, keepScreenshot, launchChromium, testConfig, watchPageErrors } from './harness.js';

let server: RunningServer;
let browser: Browser;
const log = capturedLogger();

type DemoWindow = typeof globalThis & {
  game: {
    scene: { getScene(key: string): { recent?: Toast[] } | null; isActive(key: string): boolean };
    plugins: { get(key: string): { unlock(id: string): string | undefined; pending(): unknown[] } };
  };
};

async function openGame(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => (globalThis as DemoWindow).game?.scene.isActive('title'));
  return page;
}

async function linkAndPlay(page: Page, gamertag: string) {
  await page.fill('#gamertag', gamertag);
  await page.click('#login button');
  await page.waitForFunction(() => (globalThis as DemoWindow).game.scene.isActive('play'));
}

/** The first coin waits in the middle of the board. */
async function clickFirstCoin(page: Page) {
  const box = (await page.locator('#game canvas').boundingBox())!;
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
}

const toasts = (page: Page) => page.evaluate(() => (globalThis as DemoWindow).game.scene.getScene('__rewardbus_toasts')?.recent ?? []);
const waitForToast = (page: Page, variant: string, achievementId: string) =>
  page.waitForFunction(
    ([v, a]) => ((globalThis as DemoWindow).game.scene.getScene('__rewardbus_toasts')?.recent ?? []).some((t) => t.variant === v && t.achievementId === a),
    [variant, achievementId] as const,
  );

/** What the sandbox paid a player for one achievement (the description names it). */
const paymentsFor = (gamertag: string, title: string) => server.sandbox!.payments().filter((p) => p.gamertag === gamertag && p.comment.startsWith(title));

describeInBrowser('the demo in a real browser', () => {
  beforeAll(async () => {
    server = await startDemo(testConfig(), { logger: log.logger });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('links a gamertag, pays the first coin once, and shows a toast', async () => {
    const context = await browser.newContext({ viewport: { width: 1180, height: 640 } });
    const page = await openGame(context);
    const errors = watchPageErrors(page);
    await linkAndPlay(page, 'ada');
    await clickFirstCoin(page);
    await waitForToast(page, 'paid', 'first-coin');
    await page.waitForSelector('#history li.paid');
    await keepScreenshot(page, 'demo-paid-toast.png');
    expect((await toasts(page)).find((t) => t.achievementId === 'first-coin')?.text).toBe('+21 sats · First coin → ada');
    expect(paymentsFor('ada', 'First coin')).toHaveLength(1);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('queues an unlock while offline, keeps it across a reload, and pays it once when back online', async () => {
    const context = await browser.newContext();
    const page = await openGame(context);
    await linkAndPlay(page, 'grace');
    await waitForToast(page, 'paid', 'daily-login');
    // The relay becomes unreachable for claims.
    await page.route('**/v1/rewards', (route) => route.abort('internetdisconnected'));
    await clickFirstCoin(page);
    await waitForToast(page, 'queued', 'first-coin');
    await page.waitForSelector('#status.offline');

    await page.reload();
    await page.waitForFunction(() => (globalThis as DemoWindow).game?.scene.isActive('title'));
    await page.waitForFunction(() => (globalThis as DemoWindow).game.plugins.get('rewards').pending().length === 1);
    expect(paymentsFor('grace', 'First coin')).toHaveLength(0);

    await page.unroute('**/v1/rewards');
    await context.setOffline(true);
    await context.setOffline(false); // the browser says 'online': the bus sends what waited
    await waitForToast(page, 'paid', 'first-coin');
    await page.waitForSelector('#status:not(.offline)');
    expect(paymentsFor('grace', 'First coin')).toHaveLength(1);
    await context.close();
  });

  it('with two tabs, pays each intent once and shows its toast once', async () => {
    const context = await browser.newContext();
    const a = await openGame(context);
    await linkAndPlay(a, 'tabby');
    await waitForToast(a, 'paid', 'daily-login');
    const b = await openGame(context);
    await clickFirstCoin(a);
    await b.evaluate(() => (globalThis as DemoWindow).game.plugins.get('rewards').unlock('coin-streak'));
    await Promise.race([waitForToast(a, 'paid', 'coin-streak'), waitForToast(b, 'paid', 'coin-streak')]);
    await Promise.race([waitForToast(a, 'paid', 'first-coin'), waitForToast(b, 'paid', 'first-coin')]);
    await new Promise((r) => setTimeout(r, 500));
    const all = [...(await toasts(a)), ...(await toasts(b))];
    for (const id of ['first-coin', 'coin-streak', 'daily-login']) expect(all.filter((t) => t.achievementId === id && t.variant === 'paid')).toHaveLength(1);
    expect(paymentsFor('tabby', 'First coin')).toHaveLength(1);
    expect(paymentsFor('tabby', 'Ten coins in a row')).toHaveLength(1);
    await context.close();
  });

  it('sends the browser nothing that contains the API key', async () => {
    const context = await browser.newContext();
    const seen: string[] = [];
    context.on('response', (res) => {
      seen.push(JSON.stringify(res.headers()));
      void res.text().then((t) => seen.push(t), () => undefined);
    });
    const page = await openGame(context);
    await linkAndPlay(page, 'keysafe');
    await clickFirstCoin(page);
    await waitForToast(page, 'paid', 'first-coin');
    await new Promise((r) => setTimeout(r, 200));
    const key = server.sandbox!.apiKey;
    expect(key.length).toBeGreaterThan(20);
    expect(seen.some((t) => t.includes('Phaser'))).toBe(true); // the bundle itself was read
    for (const text of [...seen, ...log.lines]) expect(text).not.toContain(key);
    await context.close();
  });

  it('buys sats in the ramp widget and shows the purchase as a toast in the game', async () => {
    const context = await browser.newContext({ viewport: { width: 1180, height: 640 } });
    const page = await openGame(context);
    const errors = watchPageErrors(page);
    await linkAndPlay(page, 'shopper');
    await page.click('#buy');
    const widget = page.frameLocator('[data-rewardbus=overlay] iframe');
    await widget.locator('#buy').click();
    await page.waitForFunction(() =>
      ((globalThis as DemoWindow).game.scene.getScene('__rewardbus_toasts')?.recent ?? []).some((t) => t.text === 'Bought 1,000 sats'),
    );
    await page.waitForSelector('[data-rewardbus=overlay]', { state: 'detached' });
    await keepScreenshot(page, 'demo-bought-toast.png');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows a withdrawal request as a QR code with its amount', async () => {
    const context = await browser.newContext({ viewport: { width: 1180, height: 640 } });
    const page = await openGame(context);
    await linkAndPlay(page, 'claimer');
    await waitForToast(page, 'paid', 'daily-login');
    await page.waitForSelector('#history li.paid');
    await page.click('#claim');
    const qr = page.locator('[data-rewardbus=withdrawal] [data-role=qr] svg');
    await qr.waitFor();
    const box = (await qr.boundingBox())!;
    expect(box.width).toBeGreaterThan(200);
    expect(await page.locator('[data-rewardbus=withdrawal] h2').textContent()).toBe('10 sats');
    expect(await page.locator('[data-rewardbus=withdrawal] [data-role=open]').getAttribute('href')).toMatch(/^lightning:lnurl1/);
    expect(await qr.locator('rect, path').count()).toBeGreaterThan(0);
    await keepScreenshot(page, 'demo-withdrawal-qr.png');
    await page.keyboard.press('Escape');
    await page.waitForSelector('[data-rewardbus=overlay]', { state: 'detached' });
    await context.close();
  });
});
