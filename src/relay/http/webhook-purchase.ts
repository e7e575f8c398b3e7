import { MAX_SATS, RAMP_PURCHASE_CURRENCIES, type RampPurchaseCurrency } from '../../contract/payments-api.js';

/** What a completed purchase tells its player about money: both fields, or neither. */
export type PurchaseAmount = { amount: string | number; currency: RampPurchaseCurrency } | Record<string, never>;

/** As many digits as MAX_SATS has: a longer string is refused before it is read as a number. */
const DIGITS = new RegExp(`^\\d{1,${String(MAX_SATS).length}}$`);

const wholeUnits = (v: unknown): v is string | number =>
  (typeof v === 'string' && DIGITS.test(v) && Number(v) <= MAX_SATS) || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= MAX_SATS);

const knownCurrency = (v: unknown): v is RampPurchaseCurrency => (RAMP_PURCHASE_CURRENCIES as readonly unknown[]).includes(v);

/**
 * The amount and currency of a completed purchase's `data`, checked, as the player is to hear them:
 * a whole number of a known unit (`RAMP_PURCHASE_CURRENCIES`), a string of digits or a number as
 * the service sent it, no more than all the sats there are. Neither field: nothing to tell but
 * the completion (the other spelling's fields are not shown anywhere). Anything else, one without
 * the other included, is a string saying why: the route refuses the delivery (400), so a number
 * the relay has not checked never reaches a player. The ledger holds nothing of a purchase (the
 * player chose it in the service's widget), so there is no amount of the relay's to compare.
 */
export function purchaseAmountOf(data: Record<string, unknown>): PurchaseAmount | string {
  const { amount, currency } = data;
  if (amount === undefined && currency === undefined) return {};
  if (!wholeUnits(amount)) return 'data.amount is not a whole number (a string of digits or an integer, 0 to 2.1e15)';
  if (!knownCurrency(currency)) return `data.currency is not one of ${RAMP_PURCHASE_CURRENCIES.join(', ')}`;
  return { amount, currency };
}
