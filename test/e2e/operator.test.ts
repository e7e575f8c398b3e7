import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/node/start-server.js';
import { DEFAULT_CATALOG } from '../../src/relay/index.js';
import { TEST_GAMERTAGS } from '../../src/sandbox/index.js';
import { describeInBrowser, keepScreenshot, launchChromium, testConfig, watchPageErrors } from './harness.js';

const TOKEN = `operator-${randomUUID()}`;
let server: RunningServer;
let browser: Browser;

async function claim(gamertag: string, achievementId: string) {
  const link = await fetch(`${server.url}/v1/players`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ gamertag }) });
  const { token } = (await link.json()) as { token: string };
  const r = await fetch(`${server.url}/v1/rewards`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': randomUUID() },
    body: JSON.stringify({ achievementId }),
  });
  return (await r.json()) as { id: string; status: string };
}

type Row = { id: string; userId: string; gamertag: string | null; achievementId: string; state: string };
const api = (path: string) => fetch(`${server.url}/admin/api${path}`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.json());

async function openWith(token: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(`${server.url}/admin`);
  await page.fill('#token', token);
  await page.fill('#operator', 'ops@example.com');
  await page.click('#login button');
  return page;
}

describeInBrowser("the operator's page", () => {
  beforeAll(async () => {
    // limbo's payment answers long after the relay's 200 ms: it waits for review.
    // The demo catalog without its play time: this page is about reviews, not witnessed play.
    const catalog = DEFAULT_CATALOG.map(({ minPlaySeconds: _wait, ...a }) => a);
    server = await startServer(testConfig({ RELAY_ADMIN_TOKEN: TOKEN, PAYMENTS_TIMEOUT_MS: '200' }), { sandbox: { limboMs: 120_000 }, relay: { catalog } });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows nothing from the ledger for a wrong token', async () => {
    expect((await claim('alice', 'first-coin')).status).toBe('paid');
    const page = await openWith('not-the-token');
    await page.waitForSelector('#login-error:text("refused")');
    expect(await page.isHidden('#app')).toBe(true);
    expect(await page.content()).not.toContain('alice');
  });

  it('shows a payout waiting for review, marks it failed with confirmation, and the budget follows the ledger', async () => {
    const waiting = await claim(TEST_GAMERTAGS.ambiguous, 'level-complete');
    const alice = (await api('/recent')).entries.find((e: Row) => e.gamertag === 'alice') as Row;
    expect(waiting.status).toBe('needs_review');
    const page = await openWith(TOKEN);
    const errors = watchPageErrors(page);
    const row = page.locator(`#review tr[data-id="${waiting.id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('limbo');
    expect(await row.textContent()).toContain('100');
    // 21 paid to alice, 100 reserved for limbo's payment under review.
    const budget = () => page.locator('#today .figure', { hasText: 'budget used' }).locator('b').textContent();
    expect(await budget()).toBe('121');
    await keepScreenshot(page, 'operator-page.png');

    page.once('dialog', (d) => void d.accept());
    await row.locator('button[data-action="mark-failed"]').click();
    await page.waitForSelector(`#review tr[data-id="${waiting.id}"]`, { state: 'detached' });
    expect(await page.locator('#review').textContent()).toContain('Nothing to review');
    expect(await budget()).toBe('21');
    // The recent list filtered by a player holds that player's payouts and no one else's.
    const { entry } = (await api(`/rewards/${waiting.id}`)) as { entry: Row };
    const recent = async (player: string) => ((await api(`/recent?player=${encodeURIComponent(player)}`)) as { entries: Row[] }).entries;
    const limbos = await recent(entry.userId);
    expect(limbos.map((e) => [e.id, e.state])).toEqual([[waiting.id, 'failed']]);
    const alices = await recent(alice.userId);
    expect(alices.map((e) => [e.userId, e.achievementId])).toEqual([[alice.userId, 'first-coin']]);
    expect(errors).toEqual([]);
  });

  it('answers its API only to the token, as problem+json', async () => {
    const r = await fetch(`${server.url}/admin/api/summary`, { headers: { authorization: 'Bearer nope' } });
    expect(r.status).toBe(401);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    const ok = await fetch(`${server.url}/admin/api/summary`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(((await ok.json()) as { today: { satsPaid: number } }).today.satsPaid).toBe(21);
  });
});
