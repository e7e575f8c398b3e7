/** Something a player's devices should hear: a reward's outcome, a ramp purchase. */
export interface PlayerEvent {
  /** Increasing; the SSE event id a reconnect resumes from. */
  id: number;
  userId: string;
  type: string;
  data: unknown;
  createdAt: number;
}

/**
 * Per-player events, kept so a reconnect loses nothing, and the service's webhook deliveries,
 * kept so each is acted on once. Async, like the ledger, for a shared store later.
 */
export interface EventLog {
  /**
   * Appends a player's event of another kind than a reward's (a reward's event is written only by
   * the ledger's write primitive, with the change it tells of): a `reward` type is refused.
   */
  append(userId: string, type: string, data: unknown): Promise<PlayerEvent>;
  /** A player's events after `afterId`, oldest first. */
  since(userId: string, afterId: number, limit?: number): Promise<PlayerEvent[]>;
  /**
   * The id of the player's latest event (0: none), for a ledger shared by several relays: a first
   * connection to the stream starts after it. Absent: a relay's own events reach its streams only live.
   */
  latestId?(userId: string): Promise<number>;
  /**
   * Records a webhook delivery by its event id and, the first time only and when `referenceId`
   * names a player's ramp session, `playerEvent` for that player (in the same transaction).
   * `fresh` is false for a repeated delivery.
   */
  receiveWebhook(
    eventId: string,
    type: string,
    referenceId: string | undefined,
    playerEvent: { type: string; data: unknown } | undefined,
  ): Promise<{ fresh: boolean; event?: PlayerEvent }>;
  /** Whether a delivery with this event id was already received (accepted once, 200 however old). */
  webhookReceived(eventId: string): Promise<boolean>;
  /** The newest webhook deliveries, each once, and whether it reached a player. */
  recentWebhooks(limit: number): Promise<WebhookRecord[]>;
  /** Remembers whose ramp session a reference id is, for the webhooks that name it. */
  rememberRampSession(referenceId: string, userId: string, sessionId: string, expiresAt: number): Promise<void>;
  /**
   * For a log shared by several relays: every event appended by any of them, in commit order.
   * Where a log has this, live streams hear events only through it. Returns how to stop.
   */
  subscribe?(fn: (event: PlayerEvent) => void, listening?: (userId: string) => boolean): Promise<() => Promise<void>>;
}

export interface WebhookRecord {
  eventId: string;
  type: string;
  referenceId?: string;
  receivedAt: number;
  /** It named a ramp session of a player, who heard of it. */
  actedOn: boolean;
}

/** A reward's event is the ledger's to write, in the transaction of the change it tells of. */
export function refuseRewardEvent(type: string): void {
  if (type === 'reward') throw new Error("a reward's event is written by the ledger's write primitive, with its change");
}
