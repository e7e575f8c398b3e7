// The demo's game server, as far as the relay knows it: the secret they share (the demo's own:
// never use it live) and the tournament it posts results of (demo/catalog.json).
export const DEMO_GAME_SERVER_SECRET = 'coin-rush-demo-game-server-secret-not-for-live-use';
export const DEMO_TOURNAMENT = 'daily-high-score';
export const DEMO_CATALOG = new URL('./catalog.json', import.meta.url).pathname;
