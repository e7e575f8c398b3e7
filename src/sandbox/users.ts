import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/** A UUID-shaped id derived from the gamertag a user first had: stable across restarts. */
function stableUserId(gamertag: string): string {
  const h = createHash('sha256').update(`rewardbus-sandbox:${gamertag}`).digest('hex');
  // Shape it as a version-4-looking UUID, as the service's ids are.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The service's users: gamertags are case-insensitive and can change; ids never do.
 * Any gamertag not seen before becomes a user on first lookup.
 */
export class UserDirectory {
  readonly #byGamertag = new Map<string, string>();
  readonly #gamertagOf = new Map<string, string>();

  /**
   * `file`: where the users are kept across restarts, as the real service keeps them (the
   * relay asks for a userId's gamertag before each payment, including after a restart).
   */
  constructor(private readonly file?: string) {
    if (!file || !existsSync(file)) return;
    for (const [id, gamertag] of Object.entries(JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>)) {
      this.#gamertagOf.set(id, gamertag);
      this.#byGamertag.set(gamertag.toLowerCase(), id);
    }
  }

  #save() {
    if (!this.file) return;
    writeFileSync(`${this.file}.tmp`, JSON.stringify(Object.fromEntries(this.#gamertagOf)));
    renameSync(`${this.file}.tmp`, this.file);
  }

  /** The userId behind a gamertag, making the user if it is new. */
  resolve(gamertag: string): string {
    const key = gamertag.toLowerCase();
    let id = this.#byGamertag.get(key);
    if (!id) {
      id = stableUserId(key);
      // A gamertag given up by a renamed user can be taken by someone new: salt until free.
      for (let n = 1; this.#gamertagOf.has(id); n++) id = stableUserId(`${key}#${n}`);
      this.#byGamertag.set(key, id);
      this.#gamertagOf.set(id, gamertag);
      this.#save();
    }
    return id;
  }

  gamertagOf(userId: string): string | undefined {
    return this.#gamertagOf.get(userId);
  }

  /** A user changes their gamertag; the old one becomes free. */
  rename(userId: string, newGamertag: string): boolean {
    const old = this.#gamertagOf.get(userId);
    if (old === undefined || this.#byGamertag.has(newGamertag.toLowerCase())) return false;
    this.#byGamertag.delete(old.toLowerCase());
    this.#byGamertag.set(newGamertag.toLowerCase(), userId);
    this.#gamertagOf.set(userId, newGamertag);
    this.#save();
    return true;
  }
}
