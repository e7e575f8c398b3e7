// The relay, from the game's side: its HTTP API, the player's event stream, and the backoff between attempts.
export { backoffDelay, type RetryOptions } from './backoff.js';
export { createRelayClient, type RelayAnswer, type RelayClient, type RelayClientOptions } from './relay-client.js';
export { type EventSourceClass, listenToRelay, PlayerStream, type RelayStreamHandlers } from './relay-stream.js';
