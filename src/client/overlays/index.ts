// The DOM overlays above the game (buy sats, claim a withdrawal): loaded when a player opens one.
export { openRamp, showWithdrawal } from './overlays.js';
