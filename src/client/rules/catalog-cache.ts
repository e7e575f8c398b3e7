import type { CatalogEntry, PayoutMode, TournamentCatalogEntry } from '../../wire/relay-api.js';
import type { RelayClient } from '../delivery/index.js';
import type { RewardStorage, WriteBatch } from '../storage/index.js';

/**
 * The relay's catalog as this device knows it: the last one seen (kept in storage, for play
 * out of the relay's reach), fetched once per session.
 */
export class CatalogCache {
  /** Undefined until a catalog is known, stored or fetched. */
  byId: Map<string, CatalogEntry> | undefined;
  /** The relay's payout mode (`balance`: guests, credits and withdrawals); undefined until known. */
  payoutMode: PayoutMode | undefined;
  /** The relay's tournaments (their titles name a prize's toast); empty until known. */
  tournaments: TournamentCatalogEntry[] = [];
  /** The relay's own catalog was read this session: not only the one a past session stored. */
  fresh = false;
  #fetch: Promise<void> | undefined;

  constructor(
    private readonly relay: Pick<RelayClient, 'catalog'>,
    private readonly writes: WriteBatch,
  ) {}

  /** Reads the catalog this device stored last. */
  async load(storage: RewardStorage) {
    const [stored, mode, tournaments] = await Promise.all([
      storage.get<CatalogEntry[]>('catalog'),
      storage.get<PayoutMode>('payoutMode'),
      storage.get<TournamentCatalogEntry[]>('tournaments'),
    ]);
    if (tournaments) this.tournaments = tournaments;
    if (stored) this.byId = new Map(stored.map((c) => [c.id, c]));
    if (stored) this.payoutMode = mode ?? 'instant';
  }

  /**
   * Some of it is credited to a balance (the relay's mode, an achievement's own `payout`, or a
   * tournament's, whose prizes a winner withdraws): the bus keeps a balance and sends heartbeats.
   */
  get credits(): boolean {
    return this.payoutMode === 'balance' || [...(this.byId?.values() ?? []), ...this.tournaments].some((c) => c.payout === 'balance');
  }

  /**
   * The catalog changes with the relay's configuration, not during play: fetched once and shared
   * by every caller (the bus at start and link, a plugin, the game); fetched again only after a failure.
   */
  refresh(): Promise<void> {
    this.#fetch ??= this.relay.catalog().then((a) => {
      if (!a.ok) {
        this.#fetch = undefined;
        return;
      }
      this.byId = new Map(a.body.achievements.map((c) => [c.id, c]));
      this.payoutMode = a.body.payoutMode ?? 'instant';
      this.tournaments = a.body.tournaments ?? [];
      this.fresh = true;
      this.writes.write([
        ['catalog', a.body.achievements],
        ['payoutMode', this.payoutMode],
        ['tournaments', this.tournaments],
      ]);
    });
    return this.#fetch;
  }
}
