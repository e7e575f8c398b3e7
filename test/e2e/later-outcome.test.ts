// A payout that went to review and is marked paid on the operator's page reaches the player:
// a second tab of the game toasts "paid after review".
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/node/start-server.js';
import type { RewardBusPlugin } from '../../src/phaser/index.js';
import { TEST_GAMERTAGS } from '../../src/sandbox/index.js';
import { capturedLogger, describeInBrowser, keepScreenshot, launchChromium, type PluginPageWindow, pluginPage, shownToasts, testConfig, watchPageErrors } from './harness.js';

let server: RunningServer;
let browser: Browser;

type PageWindow = PluginPageWindow & { plugin(): RewardBusPlugin | null };

const toasts = shownToasts;

describeInBrowser('a settlement after review, in the browser', () => {
  beforeAll(async () => {
    const fallback = await pluginPage();
    // limbo's payment answers long after the relay's 200 ms: it waits for review.
    server = await startServer(testConfig({ PAYMENTS_TIMEOUT_MS: '200' }), {
      logger: capturedLogger().logger,
      sandbox: { limboMs: 120_000 },
      fallback,
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  async function game(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => (globalThis as PageWindow).game?.scene.isActive('one'));
    return page;
  }

  it('"Mark paid" on the operator page reaches a second tab as "paid after review"', async () => {
    const context = await browser.newContext();
    const first = await game(context);
    const errors = watchPageErrors(first);
    // The first tab earns it; the payment's answer does not come in time: being checked.
    await first.evaluate(async (gamertag) => {
      const rewards = (globalThis as PageWindow).plugin()!;
      await rewards.link(gamertag);
      await new Promise<void>((resolve) => {
        rewards.on('reward:review', () => resolve());
        rewards.unlock('first-coin');
      });
    }, TEST_GAMERTAGS.ambiguous);
    await first.waitForFunction(() =>
      ((globalThis as PageWindow).game.scene.getScene((globalThis as PageWindow).TOAST_SCENE_KEY)?.recent ?? []).some((t) => t.variant === 'review'),
    );

    // A second tab of the same game (same player, same device storage), in front: the first goes
    // to the background, as in a browser window (headless Chromium calls every page visible).
    const second = await game(context);
    errors.push(...watchPageErrors(second));
    await second.waitForFunction(() => (globalThis as PageWindow).plugin()?.player !== undefined);
    await first.evaluate(() => {
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
      document.dispatchEvent(new Event('visibilitychange'));
    });

    // The operator checks with the service by hand and marks it paid on the page.
    const [transactionId] = server.sandbox!.payments().map((p) => p.transactionId);
    const operator = await (await browser.newContext()).newPage();
    await operator.goto(`${server.url}/admin`);
    await operator.fill('#token', server.adminToken!);
    await operator.fill('#operator', 'Zoë Ops');
    await operator.click('#login button');
    // The project wallet, as the service reported it (read once a minute): the sandbox's million.
    await operator.locator('#health').getByText('project wallet (sats)').waitFor();
    expect(await operator.locator('#health').textContent()).toMatch(/1.?000.?000\s*project wallet \(sats\)|999.?979\s*project wallet \(sats\)/);
    const markPaid = operator.locator('#review tr button[data-action="mark-paid"]');
    await markPaid.waitFor();
    operator.once('dialog', (d) => void d.accept(transactionId));
    await markPaid.click();
    await operator.locator('#review tr', { hasText: 'Nothing to review.' }).waitFor();

    await second.waitForFunction(
      () => ((globalThis as PageWindow).game.scene.getScene((globalThis as PageWindow).TOAST_SCENE_KEY)?.recent ?? []).some((t) => t.variant === 'paid'),
      undefined,
      { timeout: 10_000 },
    );
    const paid = (await toasts(second)).filter((t) => t.variant === 'paid');
    expect(paid.map((t) => t.text)).toEqual(['+21 sats · First coin — paid after review']);
    await keepScreenshot(second, 'paid-after-review-toast.png');
    // Said once in that tab, whatever else heard it (stream, history, the other tab).
    await expect.poll(async () => (await toasts(second)).filter((t) => t.variant === 'paid').length, { timeout: 1000 }).toBe(1);
    // The audit trail names the operator, in any script.
    const trail = await fetch(`${server.url}/admin/api/recent`, { headers: { authorization: `Bearer ${server.adminToken}` } });
    const [entry] = ((await trail.json()) as { entries: Array<{ id: string; state: string }> }).entries;
    expect(entry?.state).toBe('paid');
    const audit = (await (await fetch(`${server.url}/admin/api/rewards/${entry!.id}`, { headers: { authorization: `Bearer ${server.adminToken}` } })).json()) as {
      audit: Array<{ actor: string }>;
    };
    expect(audit.audit.map((a) => a.actor)).toEqual(['Zoë Ops']);
    expect(server.sandbox!.payments()).toHaveLength(1);
    expect(errors).toEqual([]);
  });
});
