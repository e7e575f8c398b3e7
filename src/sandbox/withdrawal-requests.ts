import { createHash, randomUUID } from 'node:crypto';
import { msatsFromSats, WITHDRAWAL_MIN_SATS, type WithdrawalRequest } from '../contract/payments-api.js';

/** Fixed ids the sandbox always knows, documented in the README. */
export const SEEDED_WITHDRAWAL_REQUEST_IDS = ['7f3c2a10-5b8e-4d21-9c6f-0a1b2c3d4e5f', 'b2e4d6f8-1a3c-4e5f-8a7b-9c0d1e2f3a4b', 'c0ffee00-dead-4bee-8f00-123456789abc'] as const;

// A made-up but bech32-looking LNURL: enough for a QR code and a `lightning:` link.
function lnurlFor(id: string, fast: boolean): string {
  const body = createHash('sha256')
    .update(`${id}:${fast}`)
    .digest('hex')
    .replace(/[^a-z0-9]/g, '');
  return `lnurl1dp68gurn8ghj7${fast ? body + body : body}`.toLowerCase();
}

export class WithdrawalRequests {
  readonly #byId = new Map<string, WithdrawalRequest>();

  constructor() {
    const [live1, live2, lapsed] = SEEDED_WITHDRAWAL_REQUEST_IDS;
    // The seeded ones carry an internalId of the spec's shape (32 hexadecimal characters); no callbackUrl.
    const internalId = (id: string) => createHash('md5').update(id).digest('hex');
    this.create({ amountSats: 100, description: 'Sandbox withdrawal #1', id: live1, internalId: internalId(live1), expiresInMs: 365 * 86_400_000 });
    this.create({ amountSats: 200, description: 'Sandbox withdrawal #2', id: live2, internalId: internalId(live2), expiresInMs: 365 * 86_400_000 });
    // One has lapsed, so an expired request can be shown too: made two days ago, expired yesterday.
    const old = Date.now() - 2 * 86_400_000;
    this.create({ amountSats: 300, description: 'Sandbox withdrawal #3', id: lapsed, internalId: internalId(lapsed), expiresInMs: 86_400_000, now: old });
  }

  /** The request as it stands now: a pending one past its expiry is expired. */
  get(id: string, now = Date.now()): WithdrawalRequest | undefined {
    const wr = this.#byId.get(id);
    if (wr?.status === 'pending' && Date.parse(wr.expiresAt) <= now) wr.status = 'expired';
    return wr;
  }

  /**
   * A new pending request. `amountSats` (test controls) or `amountMsats` (the service's own
   * `POST /v0/withdrawal-requests`); `internalId` and `callbackUrl` are the caller's, null when
   * not given (as in the service's documented examples): nothing is invented.
   */
  create(o: {
    amountSats?: number;
    amountMsats?: string;
    description: string;
    id?: string;
    expiresInMs?: number;
    now?: number;
    internalId?: string;
    callbackUrl?: string;
  }): WithdrawalRequest | string {
    const msats = o.amountMsats ?? (Number.isInteger(o.amountSats) ? msatsFromSats(o.amountSats!) : undefined);
    if (msats === undefined || BigInt(msats) < BigInt(msatsFromSats(WITHDRAWAL_MIN_SATS))) return `amount must be at least ${WITHDRAWAL_MIN_SATS} sats`;
    const id = o.id ?? randomUUID();
    const now = o.now ?? Date.now();
    const request = lnurlFor(id, false);
    const fastRequest = lnurlFor(id, true);
    const wr: WithdrawalRequest = {
      id,
      internalId: o.internalId ?? null,
      unit: 'msats',
      amount: msats,
      status: 'pending',
      description: o.description,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + (o.expiresInMs ?? 3_600_000)).toISOString(),
      confirmedAt: '',
      fee: '0',
      callbackUrl: o.callbackUrl ?? null,
      invoice: { request, fastRequest, uri: `lightning:${request}`, fastUri: `lightning:${fastRequest}` },
    };
    this.#byId.set(id, wr);
    return wr;
  }

  /**
   * A player claims the request: it becomes `completed` with its `confirmedAt`, once. A reason
   * instead when there is no such request or it is no longer pending (expired, or claimed).
   */
  claim(id: string, now = Date.now()): WithdrawalRequest | 'not_found' | 'not_pending' {
    const wr = this.get(id, now);
    if (!wr) return 'not_found';
    if (wr.status !== 'pending') return 'not_pending';
    wr.status = 'completed';
    wr.confirmedAt = new Date(now).toISOString();
    return wr;
  }
}
