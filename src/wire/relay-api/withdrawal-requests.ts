// `GET /v1/withdrawal-requests/{id}`: a payable withdrawal request, for a QR code.

/** `GET /v1/withdrawal-requests/{id}`: a payable request, for a QR code. */
export interface WithdrawalRequestView {
  id: string;
  amountSats: number;
  status: 'pending' | 'expired' | 'error' | 'completed' | string;
  description: string;
  expiresAt: string;
  /** The LNURL, and the same as a `lightning:` URI for QR codes and links. */
  lnurl: string;
  uri: string;
}
