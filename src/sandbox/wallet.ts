import { randomUUID } from 'node:crypto';
import type { TransactionStatus } from '../contract/payments-api.js';

/** A payment the sandbox made: the proof tests read to show nothing was paid twice. */
export interface SandboxPayment {
  id: string;
  transactionId: string;
  receiverId: string;
  gamertag: string;
  /** Millisatoshis, as the service counts. */
  amount: string;
  comment: string;
  /** When the service took the request. */
  processedAt: string;
  /** When it completed ("" while pending). */
  settledAt: string;
  status: TransactionStatus;
  /** When a `processing` payment reports completed. */
  completesAt?: number;
}

/** The project wallet: its balance goes down with each payment. */
export class ProjectWallet {
  #balanceMsats: bigint;
  readonly #payments: SandboxPayment[] = [];
  readonly #byTransaction = new Map<string, SandboxPayment>();

  constructor(balanceSats: number) {
    this.#balanceMsats = BigInt(balanceSats) * 1000n;
  }

  get balanceMsats(): bigint {
    return this.#balanceMsats;
  }

  /** Test controls: sets the balance, so a test can make the wallet run low. */
  setBalanceSats(sats: number): void {
    this.#balanceMsats = BigInt(sats) * 1000n;
  }

  /** Takes a claimed withdrawal request's msats out of the wallet; false when the balance is short. */
  debit(msats: string): boolean {
    if (BigInt(msats) > this.#balanceMsats) return false;
    this.#balanceMsats -= BigInt(msats);
    return true;
  }

  /** Debits the wallet and records the payment; undefined when the balance is short. */
  pay(p: Omit<SandboxPayment, 'id' | 'transactionId' | 'settledAt' | 'status'>, completesAt?: number): SandboxPayment | undefined {
    const amount = BigInt(p.amount);
    if (amount > this.#balanceMsats) return undefined;
    this.#balanceMsats -= amount;
    const payment: SandboxPayment = {
      ...p,
      id: randomUUID(),
      transactionId: randomUUID(),
      settledAt: completesAt === undefined ? new Date().toISOString() : '',
      status: completesAt === undefined ? 'TRANSACTION_STATUS_COMPLETED' : 'TRANSACTION_STATUS_PENDING',
      ...(completesAt === undefined ? {} : { completesAt }),
    };
    this.#payments.push(payment);
    this.#byTransaction.set(payment.transactionId, payment);
    return payment;
  }

  transaction(transactionId: string, now = Date.now()): SandboxPayment | undefined {
    const p = this.#byTransaction.get(transactionId);
    if (p?.completesAt !== undefined && now >= p.completesAt) {
      p.status = 'TRANSACTION_STATUS_COMPLETED';
      p.settledAt = new Date(p.completesAt).toISOString();
      delete p.completesAt;
    }
    return p;
  }

  /** Every payment made, oldest first (copies). */
  payments(): SandboxPayment[] {
    return this.#payments.map((p) => ({ ...p }));
  }
}
