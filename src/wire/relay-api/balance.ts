// Balance mode: `GET /v1/balance`, and `POST /v1/withdrawals` / `GET /v1/withdrawals`.

/** `GET /v1/balance`: what the player has earned in balance mode, and what of it they may withdraw now. */
export interface BalanceView {
  /** Credits minus withdrawals paid or under way. */
  sats: number;
  /** min(balance, allowance, the day's limit left); 0 below `minWithdrawalSats`' reach is still shown as it is. */
  withdrawableSats: number;
  minWithdrawalSats: number;
  /** Withdrawn (paid or under way) since the last UTC midnight. */
  withdrawnTodaySats: number;
  /** ISO 8601: the next UTC midnight, when `withdrawnTodaySats` starts again. */
  resetsAt: string;
}

/** `POST /v1/withdrawals` body: the sats to withdraw; absent: all that is withdrawable. */
export interface WithdrawalRequest {
  sats?: number;
}

/** paid, failed final; needs_review settled by the relay or an operator; held waits for one; pending under way. */
export type WithdrawalStatus = 'paid' | 'failed' | 'needs_review' | 'held' | 'pending';

/** A withdrawal from the player's balance, paid to their gamertag in one payment. */
export interface WithdrawalView {
  id: string;
  sats: number;
  status: WithdrawalStatus;
  /** A stable code for failed and needs_review ones. */
  reason?: string;
  paymentId?: string;
  createdAt: string;
  settledAt?: string;
}

export interface WithdrawalList {
  withdrawals: WithdrawalView[];
}
