// The players this device has linked, and their tokens (renewed when they lapse).
export { PlayerSessions } from './sessions.js';
