import type { RampSessionRequest } from '../../wire/relay-api.js';
import type { RewardBus } from '../bus.js';
import type { RampResult } from '../events.js';

// The overlays are DOM code a game needs only when a player buys or claims: loaded then.

/**
 * Shows the service's buy-sats widget in an overlay above the game. Its purchase and its error
 * (WIDGET_TRANSACTION_COMPLETE, WIDGET_ERROR, as the service's ramp client reads them; or the
 * sandbox's own messages) become `ramp:success` and `ramp:error` on the bus, closing the overlay
 * `ramp:close`; the overlay closes after any of them. Resolves with how it ended. Browsers only.
 */
export const openRamp = (bus: RewardBus, request: RampSessionRequest): Promise<RampResult> => import('./open-ramp.js').then((m) => m.openRamp(bus, request));

/**
 * Shows a withdrawal request as a QR code of its `lightning:` URI, with its amount and expiry.
 * Resolves with a function that closes it. Browsers only.
 */
export const showWithdrawal = (bus: RewardBus, id: string): Promise<() => void> => import('./show-withdrawal.js').then((m) => m.showWithdrawal(bus, id));
