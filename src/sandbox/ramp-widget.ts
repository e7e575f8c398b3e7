import { randomUUID } from 'node:crypto';
import type { Hono } from 'hono';
import { RAMP_EVENTS, SANDBOX_PURCHASE_CURRENCY } from '../contract/payments-api.js';
import { RAMP_WIDGET_MESSAGES, REWARDBUS_RAMP_SOURCE } from '../wire/ramp-widget.js';
import { postSigned } from './delivery.js';
import type { RampSessionRecord } from './ramp-sessions.js';

/** The `code` of the ramp client's WIDGET_ERROR when the test card is declined (the sandbox's own word). */
export const WIDGET_DECLINED = 'PAYMENT_DECLINED';

/** What the pretend purchase buys, in sats, for one US dollar. */
export const WIDGET_PURCHASE = { sats: 1000, fiat: '1.00', currency: 'USD' } as const;

const page = (sessionId: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Buy sats (sandbox)</title>
<style>
  body { margin: 0; font-family: system-ui, sans-serif; background: #fff; color: #111; display: grid; place-items: center; min-height: 100vh; }
  main { width: 300px; text-align: center; }
  button { display: block; width: 100%; margin: 8px 0; padding: 12px; font-size: 16px; border-radius: 8px; border: 1px solid #ccc; cursor: pointer; }
  #buy { background: #f7931a; border: 0; font-weight: 600; }
  small { color: #777; }
</style></head>
<body><main>
  <h2>Buy sats</h2>
  <p>${WIDGET_PURCHASE.sats.toLocaleString('en-US')} sats for $${WIDGET_PURCHASE.fiat}</p>
  <button id="buy">Pay with test card</button>
  <button id="decline">Use a declined card</button>
  <button id="close">Close</button>
  <p id="result"></p>
  <small>Sandbox: no money moves.</small>
</main>
<script>
  // Two spellings of each outcome: rewardbus's openRamp reads { source: 'rewardbus-ramp', type, data };
  // the service's ramp client (@zbdpay/ramp-ts) reads { type: 'WIDGET_…', payload }.
  const tell = (type, data) => parent.postMessage({ source: '${REWARDBUS_RAMP_SOURCE}', type, data }, '*');
  const tellRampClient = (type, payload) => parent.postMessage({ type, payload }, '*');
  tellRampClient('${RAMP_WIDGET_MESSAGES.ready}');
  async function finish(outcome) {
    const res = await fetch('${sessionId}/' + outcome, { method: 'POST' });
    const body = await res.json();
    document.getElementById('result').textContent = res.ok ? (outcome === 'complete' ? 'Paid!' : 'Card declined') : body.message;
    if (!res.ok) {
      tell('error', { message: body.message });
      return tellRampClient('${RAMP_WIDGET_MESSAGES.error}', { code: body.code, message: body.message });
    }
    if (outcome === 'complete') {
      tell('success', body);
      return tellRampClient('${RAMP_WIDGET_MESSAGES.transactionComplete}', body);
    }
    tell('error', body);
    tellRampClient('${RAMP_WIDGET_MESSAGES.error}', { code: '${WIDGET_DECLINED}', message: 'Card declined', details: body });
  }
  document.getElementById('buy').onclick = () => finish('complete');
  document.getElementById('decline').onclick = () => finish('fail');
  // The ramp client has no close message (1.1.9 declares no onClose): only openRamp hears this one.
  document.getElementById('close').onclick = () => tell('close');
</script></body></html>`;

/** Signs and delivers one webhook event the way the service does. */
export function deliverWebhook(url: string, secret: string | undefined, body: unknown): Promise<number> {
  // The event carries its own id and time, which the signature covers.
  return postSigned(url, secret, JSON.stringify({ id: randomUUID(), created_at: new Date().toISOString(), ...(body as object) }));
}

/** The widget a ramp session's widget_url opens: a pretend purchase that ends in signed webhooks. */
export function mountRampWidget(app: Hono, sessions: Map<string, RampSessionRecord>, webhookSecret: string | undefined) {
  app.get('/widget/:id', (c) => (sessions.has(c.req.param('id')) ? c.html(page(c.req.param('id'))) : c.text('No such session', 404)));
  app.post('/widget/:id/:outcome{complete|fail}', async (c) => {
    const session = sessions.get(c.req.param('id'));
    if (!session) return c.json({ success: false, code: 'SESSION_NOT_FOUND', message: 'No such session' }, 404);
    if (Date.parse(session.expires_at) < Date.now()) return c.json({ success: false, code: 'SESSION_EXPIRED', message: 'This session has expired' }, 410);
    const completed = c.req.param('outcome') === 'complete';
    const data = completed
      ? {
          amount: `${WIDGET_PURCHASE.sats}`,
          currency: SANDBOX_PURCHASE_CURRENCY,
          fiat_amount: WIDGET_PURCHASE.fiat,
          fiat_currency: WIDGET_PURCHASE.currency,
          reference_id: session.referenceId,
        }
      : { reference_id: session.referenceId };
    const type = completed ? RAMP_EVENTS.completed[0] : RAMP_EVENTS.failed[0];
    // A session made without a webhook_url (the ramp client allows it) has nowhere to send to.
    const status = session.webhookUrl ? await deliverWebhook(session.webhookUrl, webhookSecret, { type, data }) : null;
    return c.json({ ...data, webhookStatus: status });
  });
}
