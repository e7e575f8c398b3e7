import { count, type Setting } from './setting.js';

/** The BTC/USD price, for achievements priced and budgets set in dollars. */
export const PRICE_SETTINGS = {
  RELAY_PRICE_TTL_SECONDS: {
    ...count('seconds between reads of the BTC/USD price', 1),
    default: '60',
    field: 'priceTtlSeconds',
    option: true,
    group: 'limits',
    docs: 'with achievements priced in dollars (`"usd"`) or a dollar budget or cap: the BTC/USD price is read from the payments service this often, in the background (never on a payout\'s path)',
    help: 'how often the BTC/USD price is read (with dollar prices)',
  },
  RELAY_PRICE_MAX_AGE_SECONDS: {
    ...count('seconds a BTC/USD price may be used for', 1),
    default: '600',
    field: 'priceMaxAgeSeconds',
    option: true,
    group: 'limits',
    docs:
      'a price older than this refuses claims priced in dollars with `503 price_unavailable` and `Retry-After` (claims priced in sats go on); ' +
      'at least `RELAY_PRICE_TTL_SECONDS` (below it is a start error: claims in dollars would fail between reads)',
    help: 'older, dollar-priced claims are refused (503 price_unavailable)',
  },
} as const satisfies Record<string, Setting>;
