// The ceiling for any relay on this runtime: the same HTTP stack and upstream client as the
// relay, making the same two calls per reward (the userId's gamertag, then the payment), with no
// ledger, no checks and no auth. `node --import tsx bench/pass-through.ts PORT UPSTREAM KEY USER_ID`
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createPaymentsClient } from '../src/relay/payments/client.js';

const [port = '0', baseUrl = '', apiKey = '', userId = ''] = process.argv.slice(2);
const payments = createPaymentsClient({ baseUrl, apiKey });
const app = new Hono().post('/v1/rewards', async (c) => {
  const who = await payments.gamertagByUserId(userId);
  if (who.kind !== 'ok') return c.json({ status: 'failed' }, 502);
  const r = await payments.sendPayment({ gamertag: who.data.gamertag, amount: '1000', description: 'pass-through' });
  return c.json(r.kind === 'ok' ? { status: 'paid', paymentId: r.data.transactionId } : { status: 'failed' }, r.kind === 'ok' ? 201 : 502);
});
serve({ fetch: app.fetch, port: Number(port), hostname: '127.0.0.1' }, (info) => console.log(`listening ${info.port}`));
// Exits on the bench's SIGTERM, so that `node --cpu-prof` writes its profile.
process.on('SIGTERM', () => process.exit(0));
