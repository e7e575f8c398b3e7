import type { PlayerSession, RampSession, RampSessionRequest, WithdrawalRequestView } from '../wire/relay-api.js';
import { answer, RewardBusError } from './bus-error.js';
import type { RelayClient } from './delivery/index.js';
import type { RampResult } from './events.js';
import type { PlayerSessions } from './players/index.js';

/** Ramp sessions are reused until this close to their expiry. */
const RAMP_RENEW_BEFORE_MS = 60_000;

/** What the player's account needs of the courier around it. */
export interface PlayerAccountParts {
  relay: RelayClient;
  sessions: PlayerSessions;
  /** The courier's stored player, queue and catalog loaded. */
  ready(): Promise<void>;
  /** A token renewed for the current player: the event stream follows it. */
  renewed(session: PlayerSession): void;
  destroyed(): boolean;
}

/**
 * The linked player's requests to the relay that need a live session: the ramp (buy sats)
 * session, reused while it lives; withdrawal requests; the referral code. Renews a lapsed token.
 */
export class PlayerAccount {
  #ramp: RampSession | undefined;

  constructor(private readonly p: PlayerAccountParts) {}

  /** Reused while it lives and no purchase has ended in it. */
  async rampSession(request: RampSessionRequest): Promise<RampSession> {
    const player = await this.linked();
    if (this.#ramp && Date.parse(this.#ramp.expiresAt) - RAMP_RENEW_BEFORE_MS > Date.now()) return this.#ramp;
    return (this.#ramp = answer(await this.p.relay.rampSession(player.token, request)));
  }

  /** A purchase that ended, either way, ends the session; a widget closed without one leaves it for reuse. */
  rampEnded(result: RampResult): void {
    if (result.type !== 'close') this.#ramp = undefined;
  }

  /** Another player, or a purchase that ended (heard on the event stream): the next "buy" opens a new session. */
  forgetRamp() {
    this.#ramp = undefined;
  }

  async withdrawal(id: string): Promise<WithdrawalRequestView> {
    const player = await this.linked();
    return answer(await this.p.relay.withdrawal(player.token, id));
  }

  async referralCode(): Promise<string> {
    const player = await this.linked();
    return answer(await this.p.relay.referralCode(player.token)).code;
  }

  /** The current player's live session, or a RewardBusError. */
  async linked(): Promise<PlayerSession> {
    await this.p.ready();
    const current = this.p.sessions.current;
    if (!current) throw new RewardBusError('not_linked', 'Link a player first');
    const s = await this.sessionFor(current.userId);
    if (s === 'unreachable') throw new RewardBusError('relay_unreachable', 'The relay cannot be reached');
    if (s === 'check') throw new RewardBusError('link_refused', 'Link the player again with a human check');
    if (!s) throw new RewardBusError('not_linked', 'Link the player again');
    return s;
  }

  /** A player's live session; a renewed token for the current player moves the event stream to it. */
  async sessionFor(userId: string) {
    const s = await this.p.sessions.forUser(userId);
    if (typeof s === 'object' && s.userId === this.p.sessions.current?.userId && !this.p.destroyed()) this.p.renewed(s);
    return s;
  }
}
