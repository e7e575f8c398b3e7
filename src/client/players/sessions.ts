import type { PlayerSession } from '../../wire/relay-api.js';
import type { RelayClient } from '../delivery/index.js';
import type { RewardBusEvents } from '../events.js';
import type { RewardStorage, WriteBatch } from '../storage/index.js';

/** A token this close to its expiry is renewed before use. */
const RENEW_BEFORE_MS = 60_000;
/** Whether a session's token is lapsed or about to, by this device's clock. */
const lapsing = (s: PlayerSession) => Date.parse(s.expiresAt) - RENEW_BEFORE_MS <= Date.now();

/** A player's session as forUser() finds it (see there). */
export type SessionFor = PlayerSession | undefined | 'unreachable' | 'check';

/**
 * The players this device has linked and their tokens: the current one, and the others whose
 * queued intents still need sending. Renews a lapsed token by linking its gamertag again (a
 * guest's, with the token itself); who needs to know (the bus's event stream) sees the new token
 * in what forUser() returns. A renewal the relay's human check refuses waits for the game's link.
 */
export class PlayerSessions {
  #current: PlayerSession | undefined;
  readonly #byUser = new Map<string, PlayerSession>();
  /** When each player's session on the relay began, by this device's clock: its link here. */
  readonly #linkedAt = new Map<string, number>();
  /**
   * Players whose renewed token came already lapsed by this device's clock: it is ahead of the
   * relay's by about a token's life or more (moved forward to skip a game's timers), and says
   * nothing of the token. Used until the relay refuses it; renewing by this clock would link
   * before every request, each link a new session whose play time starts again.
   */
  readonly #clockAhead = new Set<string>();
  /** Renewals under way, by player. */
  readonly #renewing = new Map<string, Promise<SessionFor>>();
  /**
   * Players whose intents wait for the game to link them: their renewal the relay's human check
   * refused (only the player can pass it, so none is asked again), or no session of theirs here.
   */
  readonly #waitingForLink = new Set<string>();
  /** Gamertags the game is linking now (link()): a renewal the check refuses meanwhile is no news to it. */
  readonly #linking = new Map<string, number>();

  /** `checkRefused`: said once per refusal, with the player and whether they are the current one, so the game asks for the check. */
  constructor(
    private readonly storage: RewardStorage,
    private readonly writes: WriteBatch,
    private readonly relay: RelayClient,
    private readonly checkRefused: RewardBusEvents['player:check'],
  ) {}

  get current(): PlayerSession | undefined {
    return this.#current;
  }

  /** The player this device played as last time, if any. */
  async load(): Promise<PlayerSession | undefined> {
    const player = await this.stored();
    if (player) this.#byUser.set(player.userId, player);
    const linkedAt = player && (await this.storage.get<number>(`linked:${player.userId}`));
    if (player && linkedAt) this.#linkedAt.set(player.userId, linkedAt);
    return (this.#current = player);
  }

  /** The player stored on this device now: another tab's, linked (or made a guest) since this one loaded. */
  async stored(): Promise<PlayerSession | undefined> {
    const userId = await this.storage.get<string>('player');
    return userId ? this.storage.get<PlayerSession>(`session:${userId}`) : undefined;
  }

  /**
   * When the player's session began: the relay counts witnessed play (`minPlaySeconds`) from the
   * link that issued the token. Read after the link's answer came, so never sooner than the relay's.
   */
  linkedAt(userId: string): number | undefined {
    return this.#linkedAt.get(userId);
  }

  /** Makes this player (just linked, here or in another tab) the current one, remembered across reloads. */
  adopt(player: PlayerSession) {
    this.#current = player;
    this.#set(player);
    this.writes.write([['player', player.userId]]);
  }

  /** The relay refused this player's token: renew it before the next use. */
  expire(userId: string) {
    this.#clockAhead.delete(userId);
    const s = this.#byUser.get(userId);
    if (s) this.#byUser.set(userId, { ...s, expiresAt: new Date(0).toISOString() });
  }

  /** The game links this gamertag (link(), with its human check perhaps): until the returned function is called. */
  linking(gamertag: string): () => void {
    this.#linking.set(gamertag, (this.#linking.get(gamertag) ?? 0) + 1);
    return () => {
      const n = (this.#linking.get(gamertag) ?? 1) - 1;
      if (n > 0) this.#linking.set(gamertag, n);
      else this.#linking.delete(gamertag);
    };
  }

  /** The relay's human check refused this player's renewal (or this device has no session of theirs), and the game has not linked them since. */
  waitsForLink(userId: string | undefined): boolean {
    return !!userId && this.#waitingForLink.has(userId);
  }

  /**
   * A live session for a player: renewed when its token has lapsed; undefined when the gamertag
   * is gone or belongs to someone else now (a guest: lapsed past renewal, or merged); 'unreachable'
   * when the relay cannot say (out of reach, failing, or too busy to answer: 408, 429); 'check'
   * when the relay's human check refused the renewal (403 `link_refused`): the game links again
   * (here, or in another tab: its stored session ends the wait).
   */
  async forUser(userId: string): Promise<SessionFor> {
    let s = this.#byUser.get(userId);
    if (!s) {
      s = await this.storage.get<PlayerSession>(`session:${userId}`);
      // No session of theirs on this device, where their intent is (its storage lost it: the game
      // deleted its database): nothing but their link can send it, and the relay never answered
      // it, so it waits for that link (here, or stored by another tab), kept.
      if (!s) {
        this.#waitingForLink.add(userId);
        return 'check';
      }
      this.#waitingForLink.delete(userId);
      // Kept: the outcome of this player's intent is said with their gamertag (gamertagOf), not the current player's.
      this.#byUser.set(userId, s);
    }
    if (!s || this.#clockAhead.has(userId) || !lapsing(s)) return s;
    if (this.#waitingForLink.has(userId)) {
      // Another tab may have linked them with a check since (unheard where there is no tab
      // channel): the session it stored ends the wait here too. The relay is asked nothing.
      const there = await this.storage.get<PlayerSession>(`session:${userId}`);
      if (!there || there.token === s.token || lapsing(there)) return 'check';
      this.#waitingForLink.delete(userId);
      this.#byUser.set(userId, there);
      this.#linkedAt.set(userId, (await this.storage.get<number>(`linked:${userId}`)) ?? Date.now());
      if (this.#current?.userId === userId) this.#current = there;
      return there;
    }
    // One renewal at a time per player: the queue and the account (balance, play) find a lapsed
    // token together, and each asking would link (or renew a guest) twice.
    let renewing = this.#renewing.get(userId);
    if (!renewing) {
      renewing = this.#renew(userId, s).finally(() => this.#renewing.delete(userId));
      this.#renewing.set(userId, renewing);
    }
    return renewing;
  }

  async #renew(userId: string, s: PlayerSession): Promise<SessionFor> {
    // A guest has no gamertag to link again: its token renews it (refused once it linked one elsewhere).
    const a = await (s.guest ? this.relay.guest(s.token) : this.relay.link(s.gamertag));
    // Too many requests (the door's rate limit) or a timeout says nothing of the player: asked again later, never taken for a no.
    if ('unreachable' in a || (!a.ok && (a.status >= 500 || a.status === 408 || a.status === 429))) return 'unreachable';
    // A captcha (the relay's verifyLink) says nothing of the player either, and only they can pass
    // it: asked once, then nothing until the game links them with one (a link meanwhile stands).
    if (!a.ok && a.status === 403 && a.problem?.code === 'link_refused') {
      const linked = this.#byUser.get(userId);
      if (linked && linked !== s && !lapsing(linked)) return linked;
      this.#waitingForLink.add(userId);
      // The game is linking them now (its link answers for itself): not asked for a second captcha.
      if (this.#linking.has(s.gamertag)) return 'check';
      this.checkRefused({ gamertag: s.gamertag, userId, current: this.#current?.userId === userId });
      return 'check';
    }
    if (!a.ok || a.body.userId !== userId) {
      // A guest past renewal (or merged on another device) is gone: no longer this device's
      // player, so the next unlock makes a new guest rather than being refused as this one.
      if (s.guest && this.#current?.userId === userId) {
        this.#current = undefined;
        this.writes.write([['player', undefined]]);
        // Stored before anyone looks for a guest to take (balance-mode.ts reads the stored one).
        await this.writes.written;
      }
      return undefined;
    }
    this.#set(a.body);
    if (lapsing(a.body)) this.#clockAhead.add(userId);
    if (this.#current?.userId === userId) this.#current = a.body;
    return a.body;
  }

  /** The gamertag a player was last known by. */
  gamertagOf(userId: string | undefined): string {
    return (userId && this.#byUser.get(userId)?.gamertag) || this.#current?.gamertag || '';
  }

  /** A session from a link that just answered: its play time counts from now. */
  #set(player: PlayerSession) {
    const now = Date.now();
    this.#waitingForLink.delete(player.userId);
    this.#byUser.set(player.userId, player);
    this.#linkedAt.set(player.userId, now);
    this.writes.write([
      [`session:${player.userId}`, player],
      [`linked:${player.userId}`, now],
    ]);
  }
}
