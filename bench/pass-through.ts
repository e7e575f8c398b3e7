// The ceiling for any relay on this runtime: the same HTTP stack and upstream client as the
// relay, with no ledger, no checks and no auth. `node --import tsx bench/pass-through.ts PORT UPSTREAM KEY`
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createPaymentsClient } from '../src/relay/payments/client.js';

const [port = '0', baseUrl = '', apiKey = ''] = process.argv.slice(2);
const payments = createPaymentsClient({ baseUrl, apiKey });
const app = new Hono().post('/v1/rewards', async (c) => {
  const r = await payments.sendPayment({ gamertag: 'bench', amount: '1000', description: 'pass-through' });
  return c.json(r.kind === 'ok' ? { status: 'paid', paymentId: r.data.transactionId } : { status: 'failed' }, r.kind === 'ok' ? 201 : 502);
});
serve({ fetch: app.fetch, port: Number(port), hostname: '127.0.0.1' }, (info) => console.log(`listening ${info.port}`));
