// `POST /v1/ramp-sessions`: buying sats with fiat in the service's widget.

/** `POST /v1/ramp-sessions` body: buy sats with fiat in the service's widget. */
export interface RampSessionRequest {
  email: string;
  /** A lightning or Bitcoin address; default: the player's wallet in the service's app. */
  destination?: string;
  /** Fiat to pay with, e.g. USD, EUR. */
  quoteCurrency?: string;
  /** What to buy: BTC. */
  baseCurrency?: string;
  /** The game's own reference, echoed back in the purchase events. */
  referenceId?: string;
  metadata?: Record<string, string | number | boolean>;
}

/** `POST /v1/ramp-sessions` answer. The session lives 15 minutes: ask for a new one after. */
export interface RampSession {
  sessionToken: string;
  widgetUrl: string;
  expiresAt: string;
}
