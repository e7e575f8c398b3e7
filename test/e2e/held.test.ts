// A claim held for an operator, approved on the operator's page: paid once, and the player's tab
// of the game says "waiting for approval", then "paid after approval".
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/node/start-server.js';
import type { RewardBusPlugin } from '../../src/phaser/index.js';
import { capturedLogger, describeInBrowser, keepScreenshot, launchChromium, type PluginPageWindow, pluginPage, shownToasts, testConfig, watchPageErrors } from './harness.js';

const TOKEN = `operator-${randomUUID()}`;
let server: RunningServer;
let browser: Browser;

type PageWindow = PluginPageWindow & { plugin(): RewardBusPlugin | null };

const toasts = shownToasts;

describeInBrowser('a claim held for approval, in the browser', () => {
  beforeAll(async () => {
    const fallback = await pluginPage();
    // The first coin waits for an operator whatever it is worth (hold), and so does anything
    // above 50 sats; no play time: this test is about holds, not witnessed play.
    const catalog = join(mkdtempSync(join(tmpdir(), 'rewardbus-held-')), 'catalog.json');
    writeFileSync(
      catalog,
      JSON.stringify([
        { id: 'first-coin', title: 'First coin', sats: 21, repeat: { kind: 'once' }, hold: true },
        { id: 'level-complete', title: 'Level complete', sats: 100, repeat: { kind: 'once' } },
      ]),
    );
    server = await startServer(testConfig({ RELAY_ADMIN_TOKEN: TOKEN, RELAY_HOLD_ABOVE_SATS: '50', RELAY_CATALOG: catalog }), {
      logger: capturedLogger().logger,
      fallback,
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('Approve on the operator page pays it once, and the player sees "waiting for approval", then "paid after approval"', async () => {
    const player = await (await browser.newContext()).newPage();
    const errors = watchPageErrors(player);
    await player.goto(`${server.url}/`);
    await player.waitForFunction(() => (globalThis as PageWindow).game?.scene.isActive('one'));
    const held = await player.evaluate(async () => {
      const rewards = (globalThis as PageWindow).plugin()!;
      await rewards.link('alice');
      await rewards.catalog();
      return new Promise<{ pending: number; status?: string }>((resolve) => {
        rewards.on('reward:held', (o) => resolve({ pending: rewards.pending().length, ...(o.record ? { status: o.record.status } : {}) }));
        rewards.unlock('first-coin');
      });
    });
    // The relay has it: out of the queue, not paid.
    expect(held).toEqual({ pending: 0, status: 'held' });
    await player.waitForFunction(() =>
      ((globalThis as PageWindow).game.scene.getScene((globalThis as PageWindow).TOAST_SCENE_KEY)?.recent ?? []).some((t) => t.variant === 'held'),
    );
    expect((await toasts(player)).map((t) => t.text)).toEqual(['21 sats for First coin are waiting for approval']);
    expect(server.sandbox!.payments()).toHaveLength(0);

    const operator = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    errors.push(...watchPageErrors(operator));
    await operator.goto(`${server.url}/admin`);
    await operator.fill('#token', TOKEN);
    await operator.fill('#operator', 'ops@example.com');
    await operator.click('#login button');
    const row = operator.locator('#held tr[data-id]');
    await row.waitFor();
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain('first-coin');
    // Who it is for: the gamertag the claim was made with, not "? (userId)".
    expect(await row.locator('td').first().textContent()).toMatch(/^alice \(/);
    const id = await row.getAttribute('data-id');
    operator.once('dialog', (d) => void d.accept());
    await row.locator('button[data-action="approve"]').click();
    await operator.waitForSelector(`#held tr[data-id="${id}"]`, { state: 'detached' });
    await operator.locator('#held', { hasText: 'Nothing is held.' }).waitFor();

    await player.waitForFunction(
      () => ((globalThis as PageWindow).game.scene.getScene((globalThis as PageWindow).TOAST_SCENE_KEY)?.recent ?? []).some((t) => t.variant === 'paid'),
      undefined,
      { timeout: 10_000 },
    );
    expect((await toasts(player)).map((t) => t.text)).toEqual(['21 sats for First coin are waiting for approval', '+21 sats · First coin — paid after approval']);
    await player.waitForTimeout(300); // the toast's fade-in, for the picture
    await keepScreenshot(player, 'paid-after-approval-toast.png');
    expect(server.sandbox!.payments()).toHaveLength(1);
    // Said once, whatever else brings it again (the history at the next look).
    await player.evaluate(() => (globalThis as PageWindow).plugin()!.history());
    await expect.poll(async () => (await toasts(player)).filter((t) => t.variant === 'paid').length, { timeout: 1000 }).toBe(1);
    expect(server.sandbox!.payments()).toHaveLength(1);
    expect(errors).toEqual([]);
  });
});
