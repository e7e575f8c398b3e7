import { createHmac, randomUUID } from 'node:crypto';
import type { Hono } from 'hono';
import { DEFAULT_SIGNATURE_HEADER, RAMP_EVENTS } from '../contract/payments-api.js';
import type { RampSessionRecord } from './ramp-sessions.js';

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
  const tell = (type, data) => parent.postMessage({ source: 'rewardbus-ramp', type, data }, '*');
  async function finish(outcome) {
    const res = await fetch('${sessionId}/' + outcome, { method: 'POST' });
    const body = await res.json();
    document.getElementById('result').textContent = res.ok ? (outcome === 'complete' ? 'Paid!' : 'Card declined') : body.message;
    if (!res.ok) return tell('error', { message: body.message });
    tell(outcome === 'complete' ? 'success' : 'error', body);
  }
  document.getElementById('buy').onclick = () => finish('complete');
  document.getElementById('decline').onclick = () => finish('fail');
  document.getElementById('close').onclick = () => tell('close');
</script></body></html>`;

/** Signs and delivers one webhook event the way the service does. */
export async function deliverWebhook(url: string, secret: string | undefined, body: unknown): Promise<number> {
  // The event carries its own id and time, which the signature covers.
  const raw = JSON.stringify({ id: randomUUID(), created_at: new Date().toISOString(), ...(body as object) });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (secret) headers[DEFAULT_SIGNATURE_HEADER] = `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
  try {
    return (await fetch(url, { method: 'POST', headers, body: raw })).status;
  } catch {
    return 0;
  }
}

/** The widget a ramp session's widget_url opens: a pretend purchase that ends in signed webhooks. */
export function mountRampWidget(app: Hono, sessions: Map<string, RampSessionRecord>, webhookSecret: string | undefined) {
  app.get('/widget/:id', (c) => (sessions.has(c.req.param('id')) ? c.html(page(c.req.param('id'))) : c.text('No such session', 404)));
  app.post('/widget/:id/:outcome{complete|fail}', async (c) => {
    const session = sessions.get(c.req.param('id'));
    if (!session) return c.json({ success: false, message: 'No such session' }, 404);
    if (Date.parse(session.expires_at) < Date.now()) return c.json({ success: false, message: 'This session has expired' }, 410);
    const completed = c.req.param('outcome') === 'complete';
    const data = completed
      ? { amount: `${WIDGET_PURCHASE.sats}`, currency: 'SATS', fiat_amount: WIDGET_PURCHASE.fiat, fiat_currency: WIDGET_PURCHASE.currency, reference_id: session.referenceId }
      : { reference_id: session.referenceId };
    const type = completed ? RAMP_EVENTS.completed[0] : RAMP_EVENTS.failed[0];
    // A session made without a webhook_url (the ramp client allows it) has nowhere to send to.
    const status = session.webhookUrl ? await deliverWebhook(session.webhookUrl, webhookSecret, { type, data }) : null;
    return c.json({ ...data, webhookStatus: status });
  });
}
