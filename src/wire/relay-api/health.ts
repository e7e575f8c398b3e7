// `GET /v1/health` and `GET /v1/ready`.

export interface Health {
  ok: true;
  /** `sandbox` when the relay pays through its embedded emulation of the service. */
  mode: 'live' | 'sandbox';
  version: string;
  /**
   * Whether the caller's Origin may call the relay (RELAY_ALLOWED_ORIGINS); true without an
   * Origin. Health is readable from any origin, so a game can say "origin not allowed" rather
   * than "unreachable". Absent from relays before 0.3.
   */
  originAllowed?: boolean;
}

/** `GET /v1/ready`: this relay can take requests (its store and the payments service answer). Else 503 `not_ready`. */
export interface Readiness {
  ok: true;
  store: 'ok';
  service: 'ok';
}
