// Balance mode on the game's side: the balance, withdrawals and play heartbeats (loaded only when the relay credits rewards).
export { HEARTBEAT_MS, Wallet, type WalletParts } from './wallet.js';
