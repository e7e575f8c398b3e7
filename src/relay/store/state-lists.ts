import { ALL_STATES, RESERVING_STATES } from '../core/lifecycle.js';

// The lifecycle's states written into the stores' migrations, from its one table (core/lifecycle.ts).

/** The lifecycle's states, and those that reserve sats, as SQL lists. */
export const STATE_LIST = ALL_STATES.map((s) => `'${s}'`).join(', ');
export const RESERVING_LIST = RESERVING_STATES.map((s) => `'${s}'`).join(', ');
/** The same, inside a string literal (an EXECUTE's text). */
export const RESERVING_QUOTED = RESERVING_STATES.map((s) => `''${s}''`).join(', ');
