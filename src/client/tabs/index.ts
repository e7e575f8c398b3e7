// The game's other tabs: what they tell each other (a player linked, an outcome heard). Taking
// turns at sending is the queue's (queue/tab-lock.ts), loaded with it, not up front.
export { createTabChannel, type TabChannel, type TabMessage, tabsName } from './tab-channel.js';
