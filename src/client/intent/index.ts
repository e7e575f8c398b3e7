// A new reward intent: its idempotency key and time, minted once at unlock().

export { INTENT, newIntent } from './new-intent.js';
export { randomId } from './random-id.js';
