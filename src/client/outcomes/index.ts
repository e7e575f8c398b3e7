// Where an intent's outcome becomes an event, said once, and the player's history kept in step.

export { type HandedOver, type HandoverPage, handOver, handoverPage, leave, takeHandovers, takeLeft } from './handover.js';
export { intentOf, Outcomes, type OutcomesOptions } from './outcomes.js';
