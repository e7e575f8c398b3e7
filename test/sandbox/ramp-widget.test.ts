import type { AddressInfo } from 'node:net';
import { runInNewContext } from 'node:vm';
import { type ServerType, serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RampSessionData } from '../../src/contract/payments-api.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { RAMP_WIDGET_MESSAGES, rampWidgetOutcome } from '../../src/wire/ramp-widget.js';

// The widget page's own script, run against the sandbox over HTTP with a stand-in for the page
// around it: what it posts to its parent is what a hosting page hears. Each message is read the
// way its listener reads it: rewardbus's openRamp (both spellings, through rampWidgetOutcome) and
// the service's ramp client, @zbdpay/ramp-ts 1.1.9 ({ type, payload }, WidgetPostMessageEnum in
// src/types.ts, dispatched as its handleMessage in src/ramp.ts does).

let sandbox: Sandbox;
let server: ServerType;
let base: string;

beforeAll(async () => {
  sandbox = createSandbox({ apiKey: 'widget-key' });
  server = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

interface Element {
  textContent: string;
  onclick?: () => void;
}

/** Opens a fresh session's widget: its page fetched over HTTP, its script run, its messages kept. */
async function openWidget() {
  const r = await fetch(`${base}/api/v1/ramp-widget`, {
    method: 'POST',
    headers: { apikey: 'widget-key', 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'p@example.com', reference_id: 'ref-w' }),
  });
  const session = ((await r.json()) as { data: RampSessionData }).data;
  const pageUrl = `${base}/widget/${session.session_id}`;
  const html = await (await fetch(pageUrl)).text();
  const script = /<script>([\s\S]*)<\/script>/.exec(html)![1]!;
  const posted: unknown[] = [];
  const elements: Record<string, Element> = { buy: { textContent: '' }, decline: { textContent: '' }, close: { textContent: '' }, result: { textContent: '' } };
  runInNewContext(script, {
    // What crosses postMessage is a structured clone: a message that cannot be cloned throws here too.
    parent: { postMessage: (message: unknown, targetOrigin: string) => posted.push(structuredClone({ message, targetOrigin }).message) },
    document: { getElementById: (id: string) => elements[id] },
    fetch: (url: string, init: RequestInit) => fetch(new URL(url, pageUrl), init),
  });
  return { session, posted, click: (id: 'buy' | 'decline' | 'close') => elements[id]!.onclick!(), result: () => elements.result!.textContent };
}

type Heard = { onSuccess?: unknown; onError?: unknown; onReady?: true; onStepChange?: unknown };

/** The ramp client's callbacks each message would call (its handleMessage, 1.1.9). */
function rampClientHears(posted: unknown[]): Heard[] {
  return posted.flatMap((m): Heard[] => {
    const { type, payload } = m as { type?: string; payload?: { code?: string; message?: string; details?: unknown } };
    if (type === RAMP_WIDGET_MESSAGES.transactionComplete) return [{ onSuccess: payload }];
    if (type === RAMP_WIDGET_MESSAGES.error) {
      return [{ onError: { code: payload?.code || 'UNKNOWN_ERROR', message: payload?.message || 'An error occurred', details: payload?.details } }];
    }
    if (type === RAMP_WIDGET_MESSAGES.ready) return [{ onReady: true }];
    return [];
  });
}

/**
 * What rewardbus's openRamp (src/client/overlays/open-ramp.ts) finishes with, from the same
 * messages: the first one rampWidgetOutcome reads as an end, in either spelling (none, or one).
 */
function openRampHears(posted: unknown[]) {
  const ended = posted.map((m) => rampWidgetOutcome(m)).find((o) => o !== undefined);
  return ended ? [ended] : [];
}

describe("the sandbox's ramp widget, heard by both the service's ramp client and rewardbus's openRamp", () => {
  it('says it is ready on load, to the ramp client only', async () => {
    const w = await openWidget();
    expect(w.posted).toEqual([{ type: 'WIDGET_READY' }]);
    expect(rampClientHears(w.posted)).toEqual([{ onReady: true }]);
    expect(openRampHears(w.posted)).toEqual([]);
  });

  it('a purchase: WIDGET_TRANSACTION_COMPLETE with the purchase as payload (onSuccess), and the old success message', async () => {
    const w = await openWidget();
    w.click('buy');
    await expect.poll(() => w.posted.length).toBe(3);
    const purchase = { amount: '1000', currency: 'SATS', fiat_amount: '1.00', fiat_currency: 'USD', reference_id: 'ref-w', webhookStatus: null };
    expect(rampClientHears(w.posted)).toEqual([{ onReady: true }, { onSuccess: purchase }]);
    expect(openRampHears(w.posted)).toEqual([{ type: 'success', data: purchase }]);
    expect(w.result()).toBe('Paid!');
    // The wire's reader, for an openRamp that hears both: the same outcome in each spelling.
    expect(w.posted.map(rampWidgetOutcome)).toEqual([undefined, { type: 'success', data: purchase }, { type: 'success', data: purchase }]);
  });

  it('a declined card: WIDGET_ERROR with a code and message (onError), and the old error message', async () => {
    const w = await openWidget();
    w.click('decline');
    await expect.poll(() => w.posted.length).toBe(3);
    expect(rampClientHears(w.posted)[1]).toEqual({
      onError: { code: 'PAYMENT_DECLINED', message: 'Card declined', details: { reference_id: 'ref-w', webhookStatus: null } },
    });
    // The widget says its own spelling first: openRamp ends with it, the ramp client's is not heard twice.
    expect(openRampHears(w.posted)).toEqual([{ type: 'error', error: { reference_id: 'ref-w', webhookStatus: null } }]);
    expect(w.posted.map((m) => rampWidgetOutcome(m)?.type)).toEqual([undefined, 'error', 'error']);
  });

  it('an expired session: WIDGET_ERROR SESSION_EXPIRED, and the old error with its message', async () => {
    const w = await openWidget();
    sandbox.rampSessions.get(w.session.session_id)!.expires_at = new Date(Date.now() - 1000).toISOString();
    w.click('buy');
    await expect.poll(() => w.posted.length).toBe(3);
    expect(rampClientHears(w.posted)[1]).toEqual({ onError: { code: 'SESSION_EXPIRED', message: 'This session has expired', details: undefined } });
    expect(openRampHears(w.posted)).toEqual([{ type: 'error', error: { message: 'This session has expired' } }]);
  });

  it('close: the old close message only (the ramp client declares no close message)', async () => {
    const w = await openWidget();
    w.click('close');
    expect(w.posted.slice(1)).toEqual([{ source: 'rewardbus-ramp', type: 'close' }]);
    expect(rampClientHears(w.posted.slice(1))).toEqual([]);
    expect(rampWidgetOutcome(w.posted[1])).toEqual({ type: 'close' });
  });
});
