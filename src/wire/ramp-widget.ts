// What a buy-sats widget posts to the page hosting it, in both spellings a game hears: the
// service's widget, as its ramp client reads it, and the sandbox's own older one. The sandbox's
// widget posts both; rewardbus's openRamp reads both through `rampWidgetOutcome` (the first end it
// hears wins). One pure module, shared by the sandbox (which writes the messages) and
// the client (which reads them).

/**
 * The service widget's message types, `{ type, payload }`: `WidgetPostMessageEnum` of
 * zbdpay/ramp-ts src/types.ts 1.1.9. It declares no close message.
 */
export const RAMP_WIDGET_MESSAGES = {
  stepChange: 'WIDGET_STEP_CHANGE',
  error: 'WIDGET_ERROR',
  ready: 'WIDGET_READY',
  kycStatusChange: 'WIDGET_KYC_STATUS_CHANGE',
  transactionComplete: 'WIDGET_TRANSACTION_COMPLETE',
} as const;

/** The sandbox widget's own spelling: `{ source: 'rewardbus-ramp', type: 'success' | 'error' | 'close', data }`. */
export const REWARDBUS_RAMP_SOURCE = 'rewardbus-ramp';

/** How a widget ended; the same union as the client's `RampResult`. */
export type RampWidgetOutcome = { type: 'success'; data: unknown } | { type: 'error'; error: unknown } | { type: 'close' };

/**
 * The outcome one message reports, in either spelling; undefined for any other message (ready,
 * step changes, KYC, anything else on the page). As the ramp client does (`handleMessage`,
 * src/ramp.ts 1.1.9): a message may come as a JSON string, and a WIDGET_ERROR becomes
 * `{ code, message, details }` with `UNKNOWN_ERROR` and "An error occurred" when absent.
 * The caller still checks the message's origin and source window.
 */
export function rampWidgetOutcome(message: unknown): RampWidgetOutcome | undefined {
  let m = message;
  if (typeof m === 'string') {
    if (!m.trim().startsWith('{')) return undefined;
    try {
      m = JSON.parse(m);
    } catch {
      return undefined;
    }
  }
  if (m === null || typeof m !== 'object') return undefined;
  const { source, type, data, payload } = m as { source?: unknown; type?: unknown; data?: unknown; payload?: unknown };
  if (source === REWARDBUS_RAMP_SOURCE) {
    if (type === 'success') return { type: 'success', data };
    if (type === 'error') return { type: 'error', error: data };
    return type === 'close' ? { type: 'close' } : undefined;
  }
  if (type === RAMP_WIDGET_MESSAGES.transactionComplete) return { type: 'success', data: payload };
  if (type === RAMP_WIDGET_MESSAGES.error) {
    const p = (payload ?? {}) as { code?: unknown; message?: unknown; details?: unknown };
    return { type: 'error', error: { code: p.code || 'UNKNOWN_ERROR', message: p.message || 'An error occurred', details: p.details } };
  }
  return undefined;
}
