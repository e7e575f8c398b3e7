// The durable queue of intents: sent until the relay's final answer, then deleted by the queue itself.
export { IntentQueue } from './intent-queue.js';
export type { QueueEvents, QueueOptions } from './queue-options.js';
