import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRewardBus, type RewardBus } from '../../../../src/client/bus.js';
import type { RampResult } from '../../../../src/client/events.js';
import { openRamp } from '../../../../src/client/overlays/open-ramp.js';
import { memoryStorage } from '../../../../src/client/storage/index.js';
import { RAMP_WIDGET_MESSAGES, REWARDBUS_RAMP_SOURCE } from '../../../../src/wire/ramp-widget.js';

// openRamp with the page around it stood in for: a window that is a real EventTarget (the widget's
// messages arrive as `message` events on it) and the few DOM calls the overlay makes. The bus is a
// real one; only its ramp session is given, so what it emits is what a game hears.
// The service's spelling is checked against its ramp client, zbdpay/ramp-ts: WidgetPostMessageEnum
// in src/types.ts (stored commit 82d6119bb047787defa04646bdf4b91cf707c03d) and ZBDRamp.handleMessage
// in src/ramp.ts (commit 0b3b84fcfcdb45cd83c269b53fac08ef236582ad), which calls onSuccess(payload)
// for WIDGET_TRANSACTION_COMPLETE and onError({ code, message, details }) for WIDGET_ERROR, and has
// no close message (it declares no onClose since the enum came).

const WIDGET_ORIGIN = 'https://widget.example.com';

class FakeElement {
  readonly style = { cssText: '' };
  readonly dataset: Record<string, string> = {};
  readonly children: FakeElement[] = [];
  parent: FakeElement | undefined;
  onclick: ((e: { target: unknown }) => void) | null = null;
  textContent = '';
  src = '';
  title = '';
  allow = '';
  /** The frame's own window: what `event.source` is for a message it posts. */
  readonly contentWindow: object | null;
  constructor(readonly tag: string) {
    this.contentWindow = tag === 'iframe' ? {} : null;
  }
  setAttribute() {}
  append(...children: FakeElement[]) {
    for (const c of children) {
      c.parent = this;
      this.children.push(c);
    }
  }
  remove() {
    if (this.parent) this.parent.children.splice(this.parent.children.indexOf(this), 1);
    this.parent = undefined;
  }
}

let page: EventTarget;
let body: FakeElement;
let frames: FakeElement[];
let bus: RewardBus;
let heard: string[];

beforeEach(() => {
  page = new EventTarget();
  body = new FakeElement('body');
  frames = [];
  const keys = new EventTarget();
  vi.stubGlobal('window', page);
  vi.stubGlobal('document', {
    body,
    createElement: (tag: string) => {
      const e = new FakeElement(tag);
      if (tag === 'iframe') frames.push(e);
      return e;
    },
    addEventListener: keys.addEventListener.bind(keys),
    removeEventListener: keys.removeEventListener.bind(keys),
  });
  // The relay is never reached: the ramp session is given below, and nothing else is asked for.
  bus = createRewardBus({ relayUrl: 'https://relay.example.com', storage: memoryStorage(), eventSource: false, fetch: () => new Promise<Response>(() => {}) });
  bus.rampSession = async () => ({ sessionToken: 'tok', widgetUrl: `${WIDGET_ORIGIN}/widget/s1?x=1`, expiresAt: new Date(Date.now() + 900_000).toISOString() });
  heard = [];
  bus.on('ramp:success', (data) => heard.push(`ramp:success ${JSON.stringify(data)}`));
  bus.on('ramp:error', (error) => heard.push(`ramp:error ${JSON.stringify(error)}`));
  bus.on('ramp:close', () => heard.push('ramp:close'));
});
afterEach(() => {
  bus.destroy();
  vi.unstubAllGlobals();
});

/** Opens the widget and waits for its frame to be on the page. */
async function open() {
  frames.length = 0;
  const ended = openRamp(bus, { email: 'p@example.com' });
  await vi.waitFor(() => expect(frames).toHaveLength(1));
  const frame = frames[0]!;
  expect(frame.src).toBe(`${WIDGET_ORIGIN}/widget/s1?x=1`);
  let result: RampResult | undefined;
  void ended.then((r) => (result = r));
  return {
    ended,
    result: () => result,
    /** The overlay is on the page (its backdrop holds the frame). */
    shown: () => body.children.length === 1,
    post: (data: unknown, from: { origin?: string; source?: object | null } = {}) =>
      page.dispatchEvent(
        Object.assign(new Event('message'), { data, origin: from.origin ?? WIDGET_ORIGIN, source: from.source === undefined ? frame.contentWindow : from.source }),
      ),
  };
}

describe('openRamp hears the widget in both spellings and says how it ended on the bus', () => {
  it("WIDGET_TRANSACTION_COMPLETE (the ramp client's onSuccess): ramp:success with its payload", async () => {
    const w = await open();
    w.post({ type: RAMP_WIDGET_MESSAGES.transactionComplete, payload: { amount: '1000', currency: 'SATS' } });
    expect(await w.ended).toEqual({ type: 'success', data: { amount: '1000', currency: 'SATS' } });
    expect(heard).toEqual(['ramp:success {"amount":"1000","currency":"SATS"}']);
    expect(w.shown()).toBe(false);
  });

  it('WIDGET_TRANSACTION_COMPLETE sent as a JSON string, as the ramp client also reads it', async () => {
    const w = await open();
    w.post(JSON.stringify({ type: 'WIDGET_TRANSACTION_COMPLETE', payload: { amount: '5' } }));
    expect(await w.ended).toEqual({ type: 'success', data: { amount: '5' } });
    expect(heard).toEqual(['ramp:success {"amount":"5"}']);
  });

  it("WIDGET_ERROR (the ramp client's onError): ramp:error with its code, message and details, defaults as the client fills them", async () => {
    const w = await open();
    w.post({ type: RAMP_WIDGET_MESSAGES.error, payload: { code: 'PAYMENT_DECLINED', message: 'Card declined', details: { step: 2 } } });
    expect(await w.ended).toEqual({ type: 'error', error: { code: 'PAYMENT_DECLINED', message: 'Card declined', details: { step: 2 } } });
    expect(heard).toEqual(['ramp:error {"code":"PAYMENT_DECLINED","message":"Card declined","details":{"step":2}}']);

    const bare = await open();
    bare.post({ type: 'WIDGET_ERROR' });
    expect(await bare.ended).toEqual({ type: 'error', error: { code: 'UNKNOWN_ERROR', message: 'An error occurred', details: undefined } });
  });

  it("the service widget's other messages (ready, step change, KYC) end nothing; closing the overlay is ramp:close", async () => {
    const w = await open();
    for (const type of [RAMP_WIDGET_MESSAGES.ready, RAMP_WIDGET_MESSAGES.stepChange, RAMP_WIDGET_MESSAGES.kycStatusChange]) w.post({ type, payload: { step: 'kyc' } });
    w.post('[iFrameResizerChild]Ready');
    await Promise.resolve();
    expect([heard, w.result(), w.shown()]).toEqual([[], undefined, true]);
    // The ramp client declares no close message: the player closes the overlay (its × button).
    const backdrop = body.children[0]!;
    const close = backdrop.children[0]!.children.find((c) => c.tag === 'button')!;
    close.onclick!({ target: close });
    expect(await w.ended).toEqual({ type: 'close' });
    expect(heard).toEqual(['ramp:close']);
  });

  it("the sandbox's own messages: success, error and close", async () => {
    const s = await open();
    s.post({ source: REWARDBUS_RAMP_SOURCE, type: 'success', data: { amount: '1000' } });
    expect(await s.ended).toEqual({ type: 'success', data: { amount: '1000' } });

    const e = await open();
    e.post({ source: REWARDBUS_RAMP_SOURCE, type: 'error', data: { message: 'This session has expired' } });
    expect(await e.ended).toEqual({ type: 'error', error: { message: 'This session has expired' } });

    const c = await open();
    c.post({ source: REWARDBUS_RAMP_SOURCE, type: 'close' });
    expect(await c.ended).toEqual({ type: 'close' });
    expect(heard).toEqual(['ramp:success {"amount":"1000"}', 'ramp:error {"message":"This session has expired"}', 'ramp:close']);
  });

  it('a widget that says its end in both spellings (as the sandbox does) is heard once', async () => {
    const w = await open();
    w.post({ type: 'WIDGET_TRANSACTION_COMPLETE', payload: { amount: '1000' } });
    w.post({ source: REWARDBUS_RAMP_SOURCE, type: 'success', data: { amount: '1000' } });
    w.post({ source: REWARDBUS_RAMP_SOURCE, type: 'close' });
    await w.ended;
    expect(heard).toEqual(['ramp:success {"amount":"1000"}']);
  });

  it("hears only the widget's own frame: another origin or another window ends nothing", async () => {
    const w = await open();
    const success = { type: 'WIDGET_TRANSACTION_COMPLETE', payload: { amount: '1' } };
    w.post(success, { origin: 'https://evil.example.com' });
    w.post(success, { source: {} });
    w.post(success, { source: null });
    w.post({ source: REWARDBUS_RAMP_SOURCE, type: 'success' }, { origin: 'https://relay.example.com' });
    await Promise.resolve();
    expect([heard, w.result()]).toEqual([[], undefined]);
    w.post(success);
    expect((await w.ended).type).toBe('success');
  });
});
