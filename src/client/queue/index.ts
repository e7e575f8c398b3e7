// The durable queue of intents: sent until the relay's final answer, then deleted by the queue itself.
export { IntentQueue, type QueueEvents, type QueueOptions } from './intent-queue.js';
