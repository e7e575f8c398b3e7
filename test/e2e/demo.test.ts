import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDemo } from '../../demo/serve.js';
import type { RunningServer } from '../../src/node/start-server.js';
import type { Toast } from '../../src/phaser/index.js';
import { capturedLogger, describeInBrowser, keepScreenshot, launchChromium, testConfig, watchPageErrors } from './harness.js';

let server: RunningServer;
let browser: Browser;
const log = capturedLogger();

type DemoWindow = typeof globalThis & {
  game: {
    scene: { getScene(key: string): { recent?: Toast[] } | null; isActive(key: string): boolean };
    plugins: {
      get(key: string): {
        unlock(id: string): string | undefined;
        pending(): unknown[];
        on(event: string, fn: (e: { intent?: { achievementId: string }; achievementId?: string }) => void): () => void;
      };
    };
  };
  /** What the bus said, as `<event> <achievementId>`: recorded by hear(). */
  heard?: string[];
};

/** Records on the page what its bus says of these events, from now on (in `heard`). */
const hear = (page: Page, events: string[]) =>
  page.evaluate((names) => {
    const w = globalThis as DemoWindow;
    w.heard ??= [];
    for (const name of names) w.game.plugins.get('rewards').on(name, (e) => w.heard!.push(`${name} ${e.intent?.achievementId ?? e.achievementId}`));
  }, events);
const waitToHear = (page: Page, said: string) => page.waitForFunction((s) => ((globalThis as DemoWindow).heard ?? []).includes(s), said);

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
  page.waitForFunction(([v, a]) => ((globalThis as DemoWindow).game.scene.getScene('__rewardbus_toasts')?.recent ?? []).some((t) => t.variant === v && t.achievementId === a), [
    variant,
    achievementId,
  ] as const);

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
    // The player's history, as the relay serves it (GET /v1/rewards): asked for at the link.
    const historyRequests: string[] = [];
    page.on('request', (r) => r.method() === 'GET' && new URL(r.url()).pathname === '/v1/rewards' && historyRequests.push(r.url()));
    await linkAndPlay(page, 'ada');
    await clickFirstCoin(page);
    await waitForToast(page, 'paid', 'first-coin');
    await page.waitForSelector('#history li.paid');
    await page.waitForTimeout(300); // the toast's fade-in, for the picture
    await keepScreenshot(page, 'demo-paid-toast.png');
    expect((await toasts(page)).find((t) => t.achievementId === 'first-coin')?.text).toBe('+21 sats · First coin → ada');
    // The demo's login streak: its first day, as the Phaser toast says it.
    await waitForToast(page, 'paid', 'login');
    expect((await toasts(page)).find((t) => t.achievementId === 'login')?.text).toBe('Day 1 streak · +10 sats');
    // Both rewards in the panel, from their outcomes: the relay is not asked for the whole history per reward.
    // The panel draws once a frame at most, and a loaded machine's software-rendered frames are slow.
    await expect.poll(() => page.locator('#history li.paid').count(), { timeout: 5_000 }).toBe(2);
    expect(historyRequests.length).toBeLessThanOrEqual(2);
    expect(paymentsFor('ada', 'First coin')).toHaveLength(1);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('queues an unlock while offline, keeps it across a reload, and pays it once when back online', async () => {
    const context = await browser.newContext();
    const page = await openGame(context);
    await linkAndPlay(page, 'grace');
    await waitForToast(page, 'paid', 'login');
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
    await waitForToast(a, 'paid', 'login');
    const b = await openGame(context);
    await Promise.all([hear(a, ['reward:paid']), hear(b, ['reward:paid'])]);
    await clickFirstCoin(a);
    await b.evaluate(() => (globalThis as DemoWindow).game.plugins.get('rewards').unlock('coin-streak'));
    await Promise.race([waitForToast(a, 'paid', 'coin-streak'), waitForToast(b, 'paid', 'coin-streak')]);
    await Promise.race([waitForToast(a, 'paid', 'first-coin'), waitForToast(b, 'paid', 'first-coin')]);
    // Both tabs have said both payouts (one as its own, the other as heard): a reward is said once
    // per tab and never after its final outcome, so no toast for them can follow.
    for (const page of [a, b]) for (const id of ['first-coin', 'coin-streak']) await waitToHear(page, `reward:paid ${id}`);
    const all = [...(await toasts(a)), ...(await toasts(b))];
    for (const id of ['first-coin', 'coin-streak', 'login']) expect(all.filter((t) => t.achievementId === id && t.variant === 'paid')).toHaveLength(1);
    expect(paymentsFor('tabby', 'First coin')).toHaveLength(1);
    expect(paymentsFor('tabby', 'Ten coins in a row')).toHaveLength(1);
    await context.close();
  });

  it('sends the browser nothing that contains the API key', async () => {
    const context = await browser.newContext();
    const seen: string[] = [];
    const reading: Array<Promise<unknown>> = [];
    context.on('response', (res) => {
      seen.push(JSON.stringify(res.headers()));
      // An event stream's body never ends while the page is open: its messages are not read here.
      if (!res.headers()['content-type']?.includes('text/event-stream'))
        reading.push(
          res.text().then(
            (t) => seen.push(t),
            () => undefined,
          ),
        );
    });
    const page = await openGame(context);
    await linkAndPlay(page, 'keysafe');
    await clickFirstCoin(page);
    await waitForToast(page, 'paid', 'first-coin');
    await Promise.all(reading);
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
    await page.waitForFunction(() => ((globalThis as DemoWindow).game.scene.getScene('__rewardbus_toasts')?.recent ?? []).some((t) => t.text === 'Bought 1,000 sats'));
    await page.waitForSelector('[data-rewardbus=overlay]', { state: 'detached' });
    await keepScreenshot(page, 'demo-bought-toast.png');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows a withdrawal request as a QR code with its amount', async () => {
    const context = await browser.newContext({ viewport: { width: 1180, height: 640 } });
    const page = await openGame(context);
    await linkAndPlay(page, 'claimer');
    await waitForToast(page, 'paid', 'login');
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

  it('greets a returning player on a new device without a refusal, and keeps the gamertag across a reload', async () => {
    const first = await browser.newContext();
    const firstPage = await openGame(first);
    await linkAndPlay(firstPage, 'returner');
    await waitForToast(firstPage, 'paid', 'login');
    await first.close();

    const context = await browser.newContext();
    const page = await openGame(context);
    const claims: string[] = [];
    page.on('request', (r) => r.method() === 'POST' && r.url().endsWith('/v1/rewards') && claims.push(r.url()));
    await hear(page, ['reward:skipped', 'reward:queued']);
    await linkAndPlay(page, 'returner');
    // the login streak was claimed today on the other device: unlock() skipped it, so no intent was made
    // and no claim can follow; no request, no orange toast.
    await waitToHear(page, 'reward:skipped login');
    expect(await page.evaluate(() => (globalThis as DemoWindow).heard)).toEqual(['reward:skipped login']);
    expect(claims).toEqual([]);
    expect((await toasts(page)).filter((t) => t.variant !== 'paid')).toEqual([]);

    await page.reload();
    await page.waitForFunction(() => (document.getElementById('gamertag') as HTMLInputElement).value === 'returner');
    await context.close();
  });

  it('fits a phone-sized window without sideways scrolling, wraps a long gamertag inside its toast, and loads without a 404', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    const missing: string[] = [];
    page.on('response', (r) => r.status() >= 400 && missing.push(`${r.status()} ${r.url()}`));
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => (globalThis as DemoWindow).game?.scene.isActive('title'));
    const gamertag = 'a-very-long-gamertag-that-goes-on-and-on-and-on';
    await linkAndPlay(page, gamertag);
    await waitForToast(page, 'paid', 'login');
    const layout = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      canvas: document.querySelector('#game canvas')!.getBoundingClientRect().width,
    }));
    expect(layout.scrollWidth).toBeLessThanOrEqual(layout.innerWidth);
    expect(layout.canvas).toBeLessThanOrEqual(layout.innerWidth);
    const fits = await page.evaluate(() => {
      type Box = { width: number; list: Array<{ type: string; width: number; x: number }> };
      const scene = (globalThis as unknown as { game: { scene: { getScene(k: string): { children: { list: Box[] } } } } }).game.scene.getScene('__rewardbus_toasts');
      return scene.children.list.map((box) => box.list.filter((o) => o.type === 'Text').every((t) => t.x + t.width <= box.width));
    });
    expect(fits.length).toBeGreaterThan(0);
    expect(fits.every(Boolean)).toBe(true);
    await keepScreenshot(page, 'demo-narrow.png');
    expect(missing).toEqual([]);
    await context.close();
  });

  // Level complete pays after 20 s of play witnessed by the relay (the demo catalog's defense):
  // the client keeps the intent through the 425 and claims it again when due.
  it('shows the browser going offline in the panel at once, and the results total what was paid', { timeout: 60_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1180, height: 640 } });
    const page = await openGame(context);
    await linkAndPlay(page, 'counter');
    await waitForToast(page, 'paid', 'login');
    await context.setOffline(true);
    await page.waitForSelector('#status.offline', { timeout: 1000 });
    await context.setOffline(false);
    await page.waitForSelector('#status:not(.offline)');

    await clickFirstCoin(page);
    await page.evaluate(() => (globalThis as DemoWindow).game.plugins.get('rewards').unlock('level-complete'));
    await page.evaluate(() => {
      const { scene } = (globalThis as unknown as { game: { scene: { start(k: string, d: object): void; stop(k: string): void } } }).game;
      scene.stop('play');
      scene.start('results', { collected: 1, won: false });
    });
    // Sent before 20 s of play: the game says so, and no refusal is shown.
    await waitForToast(page, 'waiting', 'level-complete');
    const waiting = (await toasts(page)).find((t) => t.variant === 'waiting')!;
    expect(waiting.text).toBe('Level complete: 20 s of play needed');
    const resultTexts = () =>
      page.evaluate(() => {
        const scene = (globalThis as unknown as { game: { scene: { getScene(k: string): { children: { list: Array<{ text?: string }> } } } } }).game.scene.getScene('results');
        return scene.children.list.map((o) => o.text ?? '');
      });
    await expect.poll(async () => (await resultTexts()).some((t) => /^Level complete: paid in \d+ s \(20 s of play needed\)$/.test(t))).toBe(true);
    await page.waitForTimeout(300); // the toast's fade-in, for the picture
    await keepScreenshot(page, 'demo-play-time.png');
    // login (day 1) 10 + first-coin 21 + level-complete 100, however late the last ones land.
    await page.waitForFunction(
      () => {
        const scene = (globalThis as unknown as { game: { scene: { getScene(k: string): { children: { list: Array<{ text?: string }> } } } } }).game.scene.getScene('results');
        return scene.children.list.some((o) => o.text === '131 sats paid so far');
      },
      undefined,
      { timeout: 45_000 },
    );
    expect((await toasts(page)).filter((t) => t.variant === 'rejected')).toEqual([]);
    expect(paymentsFor('counter', 'Level complete')).toHaveLength(1);
    await waitForToast(page, 'paid', 'level-complete');
    expect((await toasts(page)).find((t) => t.variant === 'paid' && t.achievementId === 'level-complete')?.text).toBe('+100 sats · Level complete → counter');
    await context.close();
  });
});
