import type { Hono } from 'hono';
import { type BtcUsdData, PATHS } from '../contract/payments-api.js';
import { fail, jsonBody, ok } from './answers.js';

/** The rate the sandbox quotes, and whether its ticker is down (the status it answers then). */
export interface BtcUsdTicker {
  usd: number;
  failWith: 500 | 503 | undefined;
}

/**
 * `GET /v0/btcusd` in the shape @zbd/node's `getBtcUsdExchangeRate()` reads (`BTCUSDDataResponseType`,
 * dist/types/misc.d.ts), and its control: `POST /_sandbox/btcusd {"usd": 65000}` sets the price,
 * `{"fail": true}` (or `500`, `503`) makes the endpoint fail, `{"fail": false}` mends it.
 */
export function mountBtcUsd(app: Hono, ticker: BtcUsdTicker) {
  app.get(PATHS.btcUsd, (c) =>
    ticker.failWith
      ? fail(c, ticker.failWith, 'Could not retrieve the BTC/USD price')
      : ok<BtcUsdData>(c, 'Successfully retrieved BTC USD price ticker information.', { btcUsdPrice: `${ticker.usd}`, btcUsdTimestamp: new Date().toISOString() }),
  );
  app.post('/_sandbox/btcusd', async (c) => {
    const body = await jsonBody(c);
    const { usd, fail: failing } = body ?? {};
    if (!body || (usd === undefined && failing === undefined)) return fail(c, 400, 'Give "usd" (the price of one bitcoin) and/or "fail" (true, false, 500 or 503)');
    // Positive and written without an exponent, as a price string is.
    if (usd !== undefined && (typeof usd !== 'number' || !Number.isFinite(usd) || usd <= 0 || usd >= 1e12)) return fail(c, 400, 'usd must be a price above 0');
    if (failing !== undefined && ![true, false, 500, 503].includes(failing as never)) return fail(c, 400, 'fail must be true, false, 500 or 503');
    if (typeof usd === 'number') ticker.usd = usd;
    if (failing !== undefined) ticker.failWith = failing === false ? undefined : failing === true ? 500 : (failing as 500 | 503);
    return c.json({ ok: true, usd: ticker.usd, failing: ticker.failWith ?? false });
  });
}
