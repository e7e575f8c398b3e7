/**
 * The payments service's contract in one place: paths, bodies, statuses and messages, from
 * shared/payments-api-spec.md and, where it says "not shown", shared/upstream-facts.md.
 * The relay's upstream client and the sandbox both build on these, so they cannot drift apart.
 */

export const PATHS = {
  withdrawalRequest: (id: string) => `/v0/withdrawal-requests/${encodeURIComponent(id)}`,
  sendPayment: '/v0/gamertag/send-payment',
  userIdByGamertag: (gamertag: string) => `/v0/user-id/gamertag/${encodeURIComponent(gamertag)}`,
  gamertagByUserId: (userId: string) => `/v0/gamertag/user-id/${encodeURIComponent(userId)}`,
  transaction: (transactionId: string) => `/v0/gamertag/transaction/${encodeURIComponent(transactionId)}`,
  rampWidget: '/api/v1/ramp-widget',
  wallet: '/v0/wallet',
  withdrawalRequests: '/v0/withdrawal-requests',
  btcUsd: '/v0/btcusd',
} as const;

/** Every call carries the project's key in this header. */
export const API_KEY_HEADER = 'apikey';

/** `{ success, message, data }` on every `/v0` answer. */
export interface Envelope<T> {
  success: boolean;
  message: string;
  data?: T;
}

/**
 * Every ramp answer, success or error, as the official ramp client declares it
 * (`PlatformResponse<T>` in src/types.ts of zbdpay/ramp-ts 1.1.9): `data` is null on an error,
 * `error` null on success. The client reads `response.error?.message`, so a bad key gets this
 * shape too, not the `/v0` one.
 */
export interface RampAnswer<T> {
  success: boolean;
  message: string;
  data: T | null;
  error: RampError | null;
}

/** `RampError` in zbdpay/ramp-ts src/types.ts (its optional `details` is not sent). */
export interface RampError {
  code: string;
  message: string;
}

/** Ramp error codes the sandbox answers with; the relay maps some to its own words. */
export const RAMP_ERRORS = {
  invalidRequest: 'INVALID_REQUEST',
  invalidApiKey: 'INVALID_API_KEY',
  invalidEmail: 'INVALID_EMAIL',
  invalidAccessToken: 'INVALID_ACCESS_TOKEN',
  invalidWebhookUrl: 'INVALID_WEBHOOK_URL',
  invalidDestination: 'INVALID_DESTINATION',
  invalidCurrency: 'INVALID_CURRENCY',
  notFound: 'NOT_FOUND',
} as const;

export const MESSAGES = {
  invalidApiKey: 'Invalid API key provided',
  noUser: 'No user found with this gamertag',
  insufficientBalance: 'Insufficient balance in project wallet',
  paymentSent: 'Payment sent successfully',
} as const;

/** The service rejects longer descriptions. */
export const DESCRIPTION_MAX_LENGTH = 150;

/** `POST /v0/gamertag/send-payment`; amount is a string of millisatoshis ("1000" = 1 sat). */
export interface SendPaymentBody {
  gamertag: string;
  amount: string;
  description: string;
}

export interface SendPaymentData {
  id: string;
  status: 'settled' | string;
  transactionId: string;
  receiverId: string;
  amount: string;
  comment: string;
  settledAt: string;
}

export interface UserIdData {
  id: string;
}

export interface GamertagData {
  gamertag: string;
}

/** The payment-status endpoint's statuses (upstream-facts.md): any other answer is none of these. */
export const TRANSACTION_STATUSES = ['TRANSACTION_STATUS_COMPLETED', 'TRANSACTION_STATUS_PENDING', 'TRANSACTION_STATUS_FAILED'] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

/** `GET /v0/gamertag/transaction/{id}`: "Get Reward Status". */
export interface TransactionData {
  id: string;
  receiverId: string;
  amount: string;
  fee: string;
  unit: 'msats';
  processedAt: string;
  /** When it completed; the service's SDK types it as a string, so an unconfirmed one is "". */
  confirmedAt: string;
  comment: string;
  status: TransactionStatus;
}

export type WithdrawalRequestStatus = 'pending' | 'expired' | 'error' | 'completed';

export interface WithdrawalRequest {
  id: string;
  /** The caller's own id; null when it gave none (the service's documented examples show null). */
  internalId: string | null;
  unit: 'msats';
  amount: string;
  status: WithdrawalRequestStatus;
  description: string;
  createdAt: string;
  expiresAt: string;
  /** When it was claimed; "" until then. */
  confirmedAt: string;
  /** Msats the service charged; "0" in the sandbox. */
  fee: string;
  /** Where the service POSTs the request once it is claimed; null when the caller gave none. */
  callbackUrl: string | null;
  invoice: { request: string; fastRequest: string; uri: string; fastUri: string };
}

/**
 * `POST /v0/withdrawal-requests`: `WithdrawalRequestOptionsType` of @zbd/node 0.6.4
 * (dist/types/withdrawal.d.ts). `amount` in msats, `expiresIn` in seconds. @zbd/node drops null
 * fields before sending; other clients (zebedee for Python) send them as `null` or `""`: both
 * mean "not given".
 */
export interface CreateWithdrawalRequestBody {
  amount: string;
  description: string;
  expiresIn?: number | null;
  internalId?: string | null;
  callbackUrl?: string | null;
}

/** `GET /v0/wallet`, the project wallet: `WalletDataResponseType` of @zbd/node 0.6.4 (dist/types/wallet.d.ts). */
export interface WalletData {
  /** Millisatoshis, a string of digits. */
  balance: string;
  unit: 'msats';
}

/**
 * `GET /v0/btcusd`, the exchange rate: `data` of `BTCUSDDataResponseType` in @zbd/node 0.6.4
 * (dist/types/misc.d.ts), read by its `getBtcUsdExchangeRate()`. Both strings; the price is US
 * dollars for one bitcoin. The timestamp's format is not declared: the sandbox sends ISO 8601.
 */
export interface BtcUsdData {
  btcUsdPrice: string;
  btcUsdTimestamp: string;
}

/** Withdrawal requests below this are refused. */
export const WITHDRAWAL_MIN_SATS = 10;

/**
 * `POST /api/v1/ramp-widget` body. The spec requires `email` and `webhook_url`; the official
 * ramp client (`InitRampSessionConfig`, zbdpay/ramp-ts src/types.ts) sends `email` or an
 * `access_token` instead, and `webhook_url` only when given: the sandbox accepts both readings.
 */
export type RampWidgetBody = {
  webhook_url?: string;
  destination?: string;
  quote_currency?: string;
  base_currency?: string;
  reference_id?: string;
  metadata?: Record<string, unknown>;
} & ({ email: string } | { access_token: string });

/**
 * A ramp session: `InitRampSessionData` of zbdpay/ramp-ts src/types.ts (`session_token`,
 * `expires_at`, `widget_url`), plus `session_id`, which upstream-facts.md reports in the
 * service's answer and the relay stores with the session.
 */
export interface RampSessionData {
  session_token: string;
  widget_url: string;
  session_id: string;
  expires_at: string;
}

/** Ramp sessions live this long; the client asks for a new one after. */
export const RAMP_SESSION_TTL_MS = 15 * 60_000;

/** Webhook event names: the spec's spelling and the other one seen in public docs. */
export const RAMP_EVENTS = {
  completed: ['ramp.purchase.completed', 'RAMP_WIDGET.V1.PAYMENT.SETTLED'],
  failed: ['ramp.purchase.failed', 'RAMP_WIDGET.V1.PAYMENT.FAILED'],
  kycCompleted: ['ramp.kyc.completed', 'RAMP_WIDGET.V1.KYC.COMPLETED'],
} as const;

/**
 * A purchase's `data.currency`: a currency's code. The spec shows the completed event's `amount` and
 * `currency` but not their values, and its ramp's target currency is BTC (its source USD, "EUR,
 * etc."), so no list of units is known: any upper-case code of 3 to 8 letters (`BTC`, `SATS`, `USD`).
 */
export const PURCHASE_CURRENCY = /^[A-Z]{3,8}$/;

/** The unit the sandbox's purchases come in (the spec's shows none). */
export const SANDBOX_PURCHASE_CURRENCY = 'SATS';

/** Varies between public pages: `sha256=<hex HMAC-SHA256 of the raw body>` in this header. */
export const DEFAULT_SIGNATURE_HEADER = 'X-ZBD-Signature';

export const msatsFromSats = (sats: number): string => `${BigInt(sats) * 1000n}`;
export const satsFromMsats = (msats: string): number => Number(BigInt(msats) / 1000n);
