import { rampWidgetOutcome } from '../../wire/ramp-widget.js';
import type { RampSessionRequest } from '../../wire/relay-api.js';
import type { RewardBus } from '../bus.js';
import type { RampResult } from '../events.js';
import { createOverlay } from './overlay.js';

/**
 * Shows the service's buy-sats widget in an overlay above the game. What it posts, in the
 * service's spelling (WIDGET_TRANSACTION_COMPLETE, WIDGET_ERROR, as its ramp client reads them) or
 * the sandbox's own ({ source: 'rewardbus-ramp', type }), becomes `ramp:success` or `ramp:error`
 * on the bus; closing the overlay (or the sandbox's close) `ramp:close`. The overlay closes after
 * any of them; a widget that says the same end in both spellings is heard once. Resolves with how
 * it ended. Browsers only.
 */
export async function openRamp(bus: RewardBus, request: RampSessionRequest): Promise<RampResult> {
  const session = await bus.rampSession(request);
  const origin = new URL(session.widgetUrl).origin;
  return new Promise<RampResult>((resolve) => {
    let done = false;
    const finish = (result: RampResult) => {
      if (done) return;
      done = true;
      window.removeEventListener('message', onMessage);
      overlay.remove();
      bus.rampEnded(result);
      resolve(result);
    };
    const onMessage = (m: MessageEvent<unknown>) => {
      // Only the widget's own frame speaks for it.
      if (m.origin !== origin || m.source !== frame.contentWindow) return;
      const outcome = rampWidgetOutcome(m.data);
      if (outcome) finish(outcome);
    };
    const overlay = createOverlay('Buy sats', () => finish({ type: 'close' }));
    const frame = document.createElement('iframe');
    frame.src = session.widgetUrl;
    frame.title = 'Buy sats';
    frame.allow = 'payment';
    frame.style.cssText = 'display:block;width:min(420px,94vw);height:min(560px,90vh);border:0';
    overlay.panel.append(frame);
    window.addEventListener('message', onMessage);
  });
}
