import type { ChildProcess } from 'node:child_process';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/node/start-server.js';
import { deliverWebhook } from '../../src/sandbox/ramp-widget.js';
import { freePort, startChild, stop } from '../helpers/processes.js';
import { relayCommand } from '../helpers/relay-command.js';
import { capturedLogger, describeInBrowser, fixturePage, keepScreenshot, launchChromium, testConfig, watchPageErrors } from './harness.js';

// Issue 38's live-like rehearsal (docs/deploy.md §8): a live-mode relay (an API key, its
// WEBHOOK_SECRET) paying through the standalone sandbox process, run as `npm run sandbox -- <port>`
// runs it (node --import tsx src/bin/rewardbus.ts sandbox <port>) with SANDBOX_WEBHOOK_SECRET. A
// player buys sats in the sandbox's widget in Chromium, through the client's openRamp; the sandbox
// signs the purchase's webhook, the relay verifies it and tells the player, whose bus says
// `ramp:completed`. With a SANDBOX_WEBHOOK_SECRET that is not the relay's, the relay refuses the
// webhook and nothing reaches the player.

const KEY = 'rehearsal-key';
const SECRET = 'rehearsal-webhook-secret';
const children: ChildProcess[] = [];
const servers: RunningServer[] = [];
let browser: Browser;

type Heard = Array<[string, { amount?: string; currency?: string; referenceId?: string; reference_id?: string; webhookStatus?: number | null }]>;
type RampPageWindow = typeof globalThis & { heard: Heard; buy(): void; bus: { link(gamertag: string): Promise<unknown> } };

/** The sandbox alone, as `npm run sandbox -- 0` runs it, signing with `secret`. */
async function standaloneSandbox(secret: string) {
  const { child, match } = await startChild(relayCommand('sandbox', '0'), { SANDBOX_API_KEY: KEY, SANDBOX_WEBHOOK_SECRET: secret }, /sandbox on (http:\/\/\S+)(.*)/);
  children.push(child);
  expect(match[2]).toContain('signed with SANDBOX_WEBHOOK_SECRET');
  return match[1]!;
}

/** A live-mode relay paying through `sandboxUrl`, reached by it at its public URL, serving the ramp page. */
async function liveRelay(sandboxUrl: string, page: Awaited<ReturnType<typeof fixturePage>>) {
  const port = await freePort();
  const log = capturedLogger();
  const config = testConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    RELAY_PUBLIC_URL: `http://127.0.0.1:${port}`,
    PAYMENTS_API_KEY: KEY,
    PAYMENTS_BASE_URL: sandboxUrl,
    WEBHOOK_SECRET: SECRET,
  });
  const server = await startServer(config, { logger: log.logger, fallback: page });
  servers.push(server);
  expect(server.sandbox).toBeUndefined(); // live mode: no embedded sandbox
  return { server, log };
}

/** Opens the page, links a player and waits until the relay is streaming their events. */
async function openPage(context: BrowserContext, relayUrl: string, gamertag: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${relayUrl}/`);
  await page.waitForFunction(() => 'bus' in globalThis);
  const streaming = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/events' && r.status() === 200);
  await page.evaluate((g) => (globalThis as RampPageWindow).bus.link(g), gamertag);
  await streaming;
  return page;
}

/** Buys the widget's 1,000 sats with its test card, in the overlay's frame; resolves once openRamp has ended. */
async function buyInWidget(page: Page) {
  await page.evaluate(() => (globalThis as RampPageWindow).buy());
  await page.frameLocator('[data-rewardbus=overlay] iframe').locator('#buy').click();
  await page.waitForSelector('[data-rewardbus=overlay]', { state: 'detached' });
}

const heard = (page: Page) => page.evaluate(() => (globalThis as RampPageWindow).heard);
const names = (h: Heard) => h.map(([name]) => name);
const heardOf = (h: Heard, name: string) => h.find(([n]) => n === name)![1];

describeInBrowser('a live-like rehearsal: a live-mode relay, the standalone sandbox with SANDBOX_WEBHOOK_SECRET, a purchase in the widget', () => {
  let rampPage: Awaited<ReturnType<typeof fixturePage>>;
  beforeAll(async () => {
    [rampPage, browser] = await Promise.all([fixturePage('test/e2e/fixtures/ramp-page.ts'), launchChromium()]);
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all(servers.map((s) => s.close()));
    await Promise.all(children.map(stop));
  });

  it("the sandbox signs the purchase's webhook, the relay verifies it, and the player hears ramp:completed", async () => {
    const { server, log } = await liveRelay(await standaloneSandbox(SECRET), rampPage);
    const context = await browser.newContext();
    const page = await openPage(context, server.url, 'rehearser');
    const errors = watchPageErrors(page);
    await buyInWidget(page);
    await page.waitForFunction(() => (globalThis as RampPageWindow).heard.some(([name]) => name === 'ramp:completed'));
    await keepScreenshot(page, 'rehearsal-bought.png');

    const h = await heard(page);
    // The widget's end (its purchase, with the status the relay gave its webhook) and the relay's
    // word, in either order: the webhook is answered, and streamed, before the widget hears back.
    expect(names(h).sort()).toEqual(['ramp:completed', 'ramp:success']);
    const purchase = heardOf(h, 'ramp:success');
    expect(purchase).toMatchObject({ amount: '1000', currency: 'SATS', webhookStatus: 200 });
    expect(heardOf(h, 'ramp:completed')).toEqual({ amount: '1000', currency: 'SATS', referenceId: purchase.reference_id });
    expect(purchase.reference_id).toMatch(/^rb_/); // the relay's own reference, matched to this player
    const webhookLog = log.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'webhook' || l.event === 'webhook_refused');
    expect(webhookLog).toEqual([expect.objectContaining({ event: 'webhook', type: 'ramp.purchase.completed', referenceId: purchase.reference_id, fresh: true })]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('with a SANDBOX_WEBHOOK_SECRET that is not the relay’s, the relay refuses the webhook and no ramp:completed is heard', async () => {
    const { server, log } = await liveRelay(await standaloneSandbox('not-the-relays-secret'), rampPage);
    const context = await browser.newContext();
    const page = await openPage(context, server.url, 'refused');
    await buyInWidget(page);
    const [[name, purchase]] = (await heard(page)) as [Heard[number]];
    // The widget finished after its webhook was answered: the relay said 401 and logged why.
    expect([name, purchase.webhookStatus]).toEqual(['ramp:success', 401]);
    expect(log.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'webhook_refused')).toEqual([
      expect.objectContaining({ reason: 'bad_signature' }),
    ]);

    // The positive signal that the refused one said nothing: the same purchase, signed with the
    // relay's secret (a different amount, to tell them apart), reaches the player on the same stream.
    expect(await deliverWebhook(`${server.url}/v1/webhooks/payments`, SECRET, { type: 'ramp.purchase.completed', data: { ...purchase, amount: '2000' } })).toBe(200);
    await page.waitForFunction(() => (globalThis as RampPageWindow).heard.some(([name]) => name === 'ramp:completed'));
    const h = await heard(page);
    expect(h.slice(1)).toEqual([['ramp:completed', { amount: '2000', currency: 'SATS', referenceId: purchase.reference_id }]]);
    await context.close();
  });
});
