import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { CatalogEntry, ReferralProgram } from '../../wire/relay-api.js';
import { SettingError } from '../settings-errors.js';

const repeatSchema = z.discriminatedUnion(
  'kind',
  [z.object({ kind: z.literal('once') }), z.object({ kind: z.literal('daily') }), z.object({ kind: z.literal('cooldown'), seconds: z.number().int().min(0) })],
  { error: 'must be { "kind": "once" | "daily" | "cooldown" } (cooldown with "seconds")' },
);

const entrySchema = z.object(
  {
    id: z
      .string({ error: 'must be a string' })
      .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'must be 1 to 64 lowercase letters, digits, dots, dashes or underscores, starting with a letter or digit'),
    title: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
    sats: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(10_000_000, 'must be at most 10000000'),
    repeat: repeatSchema,
    minPlaySeconds: z.number({ error: 'must be a number' }).int('must be a whole number').min(0, 'must be at least 0').max(86_400, 'must be at most 86400').optional(),
    proof: z.literal('server', { error: 'must be "server" (a proof signed by the game\'s server)' }).optional(),
    hold: z.boolean({ error: 'must be true or false' }).optional(),
    payout: z.enum(['instant', 'balance'], { error: 'must be "instant" (paid at once) or "balance" (credited to the player\'s balance)' }).optional(),
  },
  { error: 'must be an object { "id", "title", "sats", "repeat" }' },
);

const sats = (what: string) =>
  z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(10_000_000, 'must be at most 10000000').describe(what);

/** A referral program (issue 37): both rewards' sats, the play it waits for, the referrer's daily cap. */
const referralSchema = z.object(
  {
    id: entrySchema.shape.id,
    kind: z.literal('referral'),
    title: entrySchema.shape.title,
    referrerSats: sats("the referrer's reward"),
    refereeSats: sats("the referee's reward"),
    afterPlaySeconds: z.number({ error: 'must be a number' }).int('must be a whole number').min(0, 'must be at least 0').max(31_536_000, 'must be at most 31536000'),
    afterAchievement: z.string({ error: "must be a string (an achievement's id)" }).optional(),
    perReferrerDaily: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').optional(),
  },
  { error: 'must be an object { "id", "kind": "referral", "title", "referrerSats", "refereeSats", "afterPlaySeconds" }' },
);

/** An entry is an achievement, or (`"kind": "referral"`) a referral program: each read by its own schema. */
const itemSchema = z.unknown().transform((v, ctx): CatalogItem => {
  const referral = v !== null && typeof v === 'object' && (v as { kind?: unknown }).kind === 'referral';
  const parsed = (referral ? referralSchema : entrySchema).safeParse(v);
  if (parsed.success) return parsed.data as CatalogItem;
  for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: 'custom', message: issue.message, path: issue.path } as never);
  return z.NEVER;
});

const entriesSchema = z.array(itemSchema, { error: 'must be a list of achievements' }).min(1, 'must hold at least one achievement');

/** A catalog's entry: an achievement a client claims, or a program the relay pays by itself (never claimable). */
export type CatalogItem = CatalogEntry | ReferralProgram;

/** What each achievement is worth: the relay's to decide, never the client's. */
export type Catalog = ReadonlyMap<string, CatalogItem>;

/** Whether a catalog entry is an achievement (claimable), not a program the relay pays by itself. */
export const isAchievement = (item: CatalogItem | undefined): item is CatalogEntry => item !== undefined && !('kind' in item && item.kind === 'referral');

/** The catalog's referral programs (none: the referral code is never read on the claim path). */
export const referralPrograms = (catalog: Catalog): ReferralProgram[] => [...catalog.values()].filter((i): i is ReferralProgram => 'kind' in i && i.kind === 'referral');

/** The catalog's achievements, as `GET /v1/catalog` lists them. */
export const achievementsOf = (catalog: Catalog): CatalogEntry[] => [...catalog.values()].filter(isAchievement);

/**
 * The demo's achievements, one of each repeat policy; used when RELAY_CATALOG is not set. The
 * largest, "Level complete", is paid only after 20 s of play witnessed by the relay (a bot that
 * links and claims at once is told to come back).
 */
export const DEFAULT_CATALOG: readonly CatalogEntry[] = [
  { id: 'first-coin', title: 'First coin', sats: 21, repeat: { kind: 'once' } },
  { id: 'level-complete', title: 'Level complete', sats: 100, repeat: { kind: 'once' }, minPlaySeconds: 20 },
  { id: 'daily-login', title: 'Daily login', sats: 10, repeat: { kind: 'daily' } },
  { id: 'coin-streak', title: 'Ten coins in a row', sats: 5, repeat: { kind: 'cooldown', seconds: 30 } },
];

/**
 * The entries checked, or the reasons they are not a catalog: each names the entry (its index
 * and, when it has one, its id) and the field, e.g. `achievements[2] (id "coin-streak"): sats must be at least 1`.
 */
export function checkCatalog(entries: unknown): { entries: CatalogItem[] } | { problems: string[] } {
  const parsed = entriesSchema.safeParse(entries);
  const problems = parsed.success ? [] : parsed.error.issues.map((issue) => describe(entries, issue));
  if (parsed.success) {
    const first = new Map<string, number>();
    parsed.data.forEach((a, i) => {
      const before = first.get(a.id);
      if (before === undefined) first.set(a.id, i);
      else problems.push(`achievements[${i}] (id ${JSON.stringify(a.id)}): id is already used by achievements[${before}]; ids must be unique`);
    });
    parsed.data.forEach((a, i) => {
      if (!('kind' in a) || a.kind !== 'referral' || a.afterAchievement === undefined) return;
      if (!isAchievement(parsed.data.find((b) => b.id === a.afterAchievement)))
        problems.push(`achievements[${i}] (id ${JSON.stringify(a.id)}): afterAchievement must be the id of an achievement in the catalog`);
    });
  }
  return problems.length || !parsed.success ? { problems } : { entries: parsed.data };
}

function describe(entries: unknown, issue: z.core.$ZodIssue): string {
  const [index, ...field] = issue.path;
  if (typeof index !== 'number') return `the list ${issue.message}`;
  const entry = Array.isArray(entries) ? (entries[index] as { id?: unknown } | undefined) : undefined;
  const id = typeof entry?.id === 'string' ? ` (id ${JSON.stringify(entry.id)})` : '';
  const name = field.length ? field.join('.') : 'the entry';
  // A missing field reads better as such than as "must be a string".
  const missing = field.length && entry && typeof entry === 'object' && !(String(field[0]) in entry);
  return `achievements[${index}]${id}: ${name} ${missing ? `is missing (it ${issue.message})` : issue.message}`;
}

/** A catalog from entries written in code; throws, naming the entry and field, on a bad one. */
export function createCatalog(entries: readonly CatalogItem[]): Catalog {
  const checked = checkCatalog(entries);
  if ('problems' in checked) throw new Error(`Invalid catalog: ${checked.problems.join('; ')}`);
  return new Map(checked.entries.map((a) => [a.id, a]));
}

/**
 * Reads a JSON file of achievements: a bare array, or `{ "achievements": [...] }`. Fails with a
 * SettingError naming the setting the path came from, the entry (index and id) and the field.
 */
export function loadCatalogFile(path: string, setting = 'RELAY_CATALOG'): Catalog {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code ? `cannot be read (${code})` : `is not valid JSON (${(err as Error).message})`;
    throw new SettingError(setting, `${setting}: ${path} ${why}`, { cause: err });
  }
  const wrapped = json !== null && typeof json === 'object' && !Array.isArray(json);
  if (wrapped && !('achievements' in (json as object))) {
    throw new SettingError(setting, `${setting}: ${path} is not a catalog: it must be a list of achievements, or { "achievements": [...] }`);
  }
  const checked = checkCatalog(wrapped ? (json as { achievements: unknown }).achievements : json);
  if ('problems' in checked) throw new SettingError(setting, `${setting}: ${path} is not a catalog:\n  ${checked.problems.join('\n  ')}`);
  return new Map(checked.entries.map((a) => [a.id, a]));
}
