import { PURCHASE_CURRENCY } from '../../contract/payments-api.js';

/** What a completed purchase tells its player about money: both fields, or neither. */
export type PurchaseAmount = { amount: string | number; currency: string } | Record<string, never>;

/**
 * A non-negative decimal as the service may write it: digits, perhaps a fraction (`"0.00015"` of
 * BTC), at most 20 and 18 of them. No sign, exponent, space or empty string.
 */
const DECIMAL = /^\d{1,20}(\.\d{1,18})?$/;

const decimal = (v: unknown): v is string | number => (typeof v === 'string' && DECIMAL.test(v)) || (typeof v === 'number' && Number.isFinite(v) && v >= 0);

/**
 * The amount and currency of a completed purchase's `data`, checked, as the player is to hear them:
 * a non-negative decimal (a string or a number, as the service sent it) in a currency's code.
 * The unit is not known (the spec shows none), so any code is taken: refusing one would refuse
 * every genuine purchase in it, and the service would retry them forever. Neither field: nothing
 * to tell but the completion. Anything else, one without the other included, is a string saying
 * why: the route refuses the delivery (400), so a value the relay has not checked never reaches
 * a player. The ledger holds nothing of a purchase (the player chose it in the service's widget),
 * so there is no amount of the relay's to compare.
 */
export function purchaseAmountOf(data: Record<string, unknown>): PurchaseAmount | string {
  const { amount, currency } = data;
  if (amount === undefined && currency === undefined) return {};
  if (!decimal(amount)) return 'data.amount is not a non-negative decimal number';
  if (typeof currency !== 'string' || !PURCHASE_CURRENCY.test(currency)) return "data.currency is not a currency's code (3 to 8 capital letters)";
  return { amount, currency };
}
