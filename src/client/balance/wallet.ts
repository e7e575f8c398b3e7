import type { BalanceView, PlayerSession, RewardRecord, WithdrawalView } from '../../wire/relay-api.js';
import { answer, RewardBusError } from '../bus-error.js';
import { backoffDelay, type RelayAnswer, type RelayClient, type RetryOptions } from '../delivery/index.js';
import type { RewardBusEvents } from '../events.js';
import { randomId } from '../intent/index.js';

/** Witnessed play: a heartbeat this often while the game is visible (the relay counts gaps up to 60 s). */
export const HEARTBEAT_MS = 20_000;
/** Attempts of one withdrawal (one key) before withdraw() gives up and says why. */
const WITHDRAW_TRIES = 6;
/** Withdrawals said, remembered for dedupe. */
const SAID_KEPT = 200;

type WithdrawalEvent = 'withdrawal:paid' | 'withdrawal:failed' | 'withdrawal:review';

/** Where a withdrawal nobody here asked for is shown: the visible tab (or a process with no page). */
const shownHere = () => typeof document === 'undefined' || document.visibilityState !== 'hidden';

/** What the courier lends the wallet. */
export interface WalletParts {
  relay: Pick<RelayClient, 'balance' | 'withdraw' | 'play'>;
  /** The current player (or guest), if any. */
  player(): PlayerSession | undefined;
  /** A live session for the current player: renewed if its token lapsed. */
  session(): Promise<PlayerSession>;
  /** The relay refused this player's token. */
  expire(userId: string): void;
  /** The relay's human check refused the current player's renewal: nothing is asked with their lapsed token until a link. */
  waitsForLink(): boolean;
  emit<E extends 'balance:changed' | WithdrawalEvent>(event: E, e: Parameters<RewardBusEvents[E]>[0]): void;
  /** The catalog credits rewards (heartbeats only then). */
  credits(): boolean;
  retry: RetryOptions | undefined;
}

/** The event a withdrawal's status calls for; pending has none (the relay is at it). */
function withdrawalEvent(status: string): WithdrawalEvent | undefined {
  if (status === 'pending') return undefined;
  if (status === 'paid') return 'withdrawal:paid';
  return status === 'failed' || status === 'rejected' ? 'withdrawal:failed' : 'withdrawal:review';
}

/** A withdrawal heard on the event stream (a `reward` whose record says `kind: 'withdrawal'`), as withdraw() answers it. */
function withdrawalOf(r: RewardRecord): WithdrawalView {
  return {
    id: r.id,
    sats: r.sats,
    // A withdrawal denied by an operator failed: its sats are back on the balance.
    status: r.status === 'rejected' ? 'failed' : (r.status as WithdrawalView['status']),
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.paymentId ? { paymentId: r.paymentId } : {}),
    createdAt: r.createdAt,
    ...(r.settledAt ? { settledAt: r.settledAt } : {}),
  };
}

/** A 2xx that is no withdrawal (another server's JSON with a `status` of its own) is no answer of the relay's: out of reach. */
function noWithdrawal(a: RelayAnswer<WithdrawalView>): RelayAnswer<WithdrawalView> {
  if (!a.ok || (typeof a.body.id === 'string' && typeof a.body.status === 'string')) return a;
  return {
    ok: false,
    status: 0,
    unreachable: true,
    foreign: { status: a.status, why: `a withdrawal was answered ${a.status} with no withdrawal: check relayUrl and any proxy in front of the relay` },
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Balance mode on the game's side, loaded by the courier only when the relay's catalog credits
 * rewards: the player's balance (fetched after credits and withdrawals, coalesced), withdrawals
 * (one key per call, sent again under it until the relay answers for good), each said once as an
 * event whichever way it came, and the play heartbeats while the page is visible.
 */
export class Wallet {
  #balance: BalanceView | undefined;
  #refreshing: Promise<void> | undefined;
  #again = false;
  readonly #said = new Map<string, WithdrawalEvent>();
  #beats: ReturnType<typeof setInterval> | undefined;
  #stopped = false;
  readonly #onVisibility = () => this.heartbeats();

  constructor(private readonly p: WalletParts) {
    if (typeof document !== 'undefined') document.addEventListener('visibilitychange', this.#onVisibility);
    this.heartbeats();
  }

  /** The balance as the relay last said it. */
  get last(): BalanceView | undefined {
    return this.#balance;
  }

  async balance(): Promise<BalanceView> {
    const player = await this.p.session();
    const a = await this.p.relay.balance(player.token);
    if (!a.ok && a.status === 401) this.p.expire(player.userId);
    const b = answer(a);
    this.#is(b, false);
    return b;
  }

  /** Fetches the balance after a credit or a withdrawal: one request at a time, one more for what came meanwhile; says `balance:changed`. */
  refresh(): Promise<void> {
    if (this.#refreshing) {
      this.#again = true;
      return this.#refreshing;
    }
    this.#refreshing = (async () => {
      let last: BalanceView | undefined;
      do {
        this.#again = false;
        if (this.#stopped) return;
        const a = await this.#asPlayer((token) => this.p.relay.balance(token));
        if (!a) return;
        if (a.ok) last = a.body;
      } while (this.#again && !this.#stopped);
      if (last && !this.#stopped) this.#is(last, true);
    })().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  /** Another player (a link, a guest's merge): their balance, from nothing. */
  playerChanged() {
    this.#balance = undefined;
    this.heartbeats();
    void this.refresh();
  }

  async withdraw(sats?: number): Promise<WithdrawalView> {
    // Minted once: every attempt of this withdrawal carries it, so it is paid at most once.
    const key = randomId();
    const body = sats === undefined ? {} : { sats };
    for (let attempt = 0; ; attempt++) {
      const player = await this.p.session();
      if (player.guest) throw new RewardBusError('gamertag_required', 'Link a gamertag to withdraw');
      const a = noWithdrawal(await this.p.relay.withdraw(player.token, key, body));
      if (a.ok) {
        this.heard(a.body, true);
        return a.body;
      }
      if (a.status === 401) this.p.expire(player.userId);
      // The same key again: nothing was decided (out of reach, 408, 429, the same key still at work), or
      // a 5xx (a proxy's 502 or 504 may hide the relay's answer; the key replays whatever it decided).
      const again = a.status === 0 || a.status === 401 || a.status === 408 || a.status === 429 || a.status >= 500 || ('problem' in a && a.problem?.code === 'request_in_flight');
      if (!again || attempt >= WITHDRAW_TRIES - 1 || this.#stopped) return answer(a);
      await sleep(backoffDelay(attempt, this.p.retry, 'retryAfterMs' in a ? a.retryAfterMs : undefined));
    }
  }

  /** A withdrawal's state, from withdraw()'s answer (`own`) or the event stream: each (withdrawal, event) said once, nothing after paid or failed. */
  heard(w: WithdrawalView, own: boolean) {
    const event = withdrawalEvent(w.status);
    const last = this.#said.get(w.id);
    if (!event || last === event || last === 'withdrawal:paid' || last === 'withdrawal:failed') return;
    this.#said.delete(w.id);
    this.#said.set(w.id, event);
    while (this.#said.size > SAID_KEPT) this.#said.delete(this.#said.keys().next().value!);
    this.p.emit(event, { withdrawal: w, gamertag: this.p.player()?.gamertag ?? '', remote: !own && !shownHere() });
    void this.refresh();
  }

  /** A withdrawal on the event stream: a `reward` whose record says `kind: 'withdrawal'`. */
  heardRecord(r: RewardRecord) {
    this.heard(withdrawalOf(r), false);
  }

  /** Heartbeats on while there is a player and the page is visible (in Node: while the bus lives); off otherwise. */
  heartbeats() {
    const on = !this.#stopped && this.p.credits() && !!this.p.player() && (typeof document === 'undefined' || document.visibilityState === 'visible');
    if (on && !this.#beats) {
      void this.#beat();
      this.#beats = setInterval(() => void this.#beat(), HEARTBEAT_MS);
      // In Node, heartbeats do not keep the process alive.
      (this.#beats as { unref?: () => void }).unref?.();
    } else if (!on && this.#beats) {
      clearInterval(this.#beats);
      this.#beats = undefined;
    }
  }

  stop() {
    this.#stopped = true;
    this.heartbeats();
    if (typeof document !== 'undefined') document.removeEventListener('visibilitychange', this.#onVisibility);
  }

  async #beat() {
    await this.#asPlayer((token) => this.p.relay.play(token));
  }

  /**
   * A request with the current player's token (none without a player, or while the player waits
   * for the human check: heartbeats would each be refused), sent once more with a
   * renewed one when the relay says it lapsed: heartbeats and the balance would otherwise be
   * refused until a claim renewed it, and witnessed play would not count meanwhile.
   */
  async #asPlayer<T>(request: (token: string) => Promise<RelayAnswer<T>>): Promise<RelayAnswer<T> | undefined> {
    const player = this.p.player();
    if (!player || this.p.waitsForLink()) return undefined;
    const a = await request(player.token);
    if (a.ok || a.status !== 401) return a;
    this.p.expire(player.userId);
    const renewed = await this.p.session().catch(() => undefined);
    return renewed ? request(renewed.token) : a;
  }

  #is(b: BalanceView, always: boolean) {
    const changed = JSON.stringify(b) !== JSON.stringify(this.#balance);
    this.#balance = b;
    if (changed || always) this.p.emit('balance:changed', b);
  }
}
