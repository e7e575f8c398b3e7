import type { RampSessionRequest } from '../../wire/relay-api.js';
import type { RewardBus } from '../bus.js';
import type { RampResult } from '../events.js';
import { createOverlay } from './overlay.js';

/**
 * Shows the service's buy-sats widget in an overlay above the game. Its onSuccess / onError /
 * onClose become `ramp:success`, `ramp:error` and `ramp:close` on the bus; the overlay closes
 * after any of them. Resolves with how it ended. Browsers only.
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
    const onMessage = (m: MessageEvent<{ source?: string; type?: string; data?: unknown }>) => {
      // Only the widget's own frame speaks for it.
      if (m.origin !== origin || m.source !== frame.contentWindow || m.data?.source !== 'rewardbus-ramp') return;
      if (m.data.type === 'success') finish({ type: 'success', data: m.data.data });
      else if (m.data.type === 'error') finish({ type: 'error', error: m.data.data });
      else if (m.data.type === 'close') finish({ type: 'close' });
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
