import { describe, expect, it } from 'vitest';
import { rampWidgetOutcome } from '../../../src/wire/ramp-widget.js';

describe('rampWidgetOutcome: how a buy-sats widget ended, in either spelling', () => {
  it("reads the service widget's messages as its ramp client does", () => {
    expect(rampWidgetOutcome({ type: 'WIDGET_TRANSACTION_COMPLETE', payload: { amount: '1000' } })).toEqual({ type: 'success', data: { amount: '1000' } });
    expect(rampWidgetOutcome({ type: 'WIDGET_ERROR', payload: { code: 'KYC_FAILED', message: 'No', details: { step: 2 } } })).toEqual({
      type: 'error',
      error: { code: 'KYC_FAILED', message: 'No', details: { step: 2 } },
    });
    expect(rampWidgetOutcome({ type: 'WIDGET_ERROR' })).toEqual({ type: 'error', error: { code: 'UNKNOWN_ERROR', message: 'An error occurred', details: undefined } });
    // Sent as a JSON string, as the widget may.
    expect(rampWidgetOutcome(JSON.stringify({ type: 'WIDGET_TRANSACTION_COMPLETE', payload: 1 }))).toEqual({ type: 'success', data: 1 });
  });

  it("reads the sandbox widget's own messages", () => {
    expect(rampWidgetOutcome({ source: 'rewardbus-ramp', type: 'success', data: { a: 1 } })).toEqual({ type: 'success', data: { a: 1 } });
    expect(rampWidgetOutcome({ source: 'rewardbus-ramp', type: 'error', data: { message: 'm' } })).toEqual({ type: 'error', error: { message: 'm' } });
    expect(rampWidgetOutcome({ source: 'rewardbus-ramp', type: 'close' })).toEqual({ type: 'close' });
  });

  it('ends nothing on any other message', () => {
    for (const m of [
      { type: 'WIDGET_READY' },
      { type: 'WIDGET_STEP_CHANGE', payload: { previousStep: null, currentStep: 'kyc' } },
      { type: 'WIDGET_KYC_STATUS_CHANGE', payload: {} },
      { source: 'rewardbus-ramp', type: 'done' },
      { type: 'success' },
      '[iFrameResizerChild]Ready',
      '{not json',
      'hello',
      null,
      42,
      undefined,
    ]) {
      expect(rampWidgetOutcome(m)).toBeUndefined();
    }
  });
});
