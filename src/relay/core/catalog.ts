import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { CatalogEntry, ReferralProgram, TournamentCatalogEntry } from '../../wire/relay-api.js';
import { SettingError } from '../settings-errors.js';
import { type Amount, inDollars } from './price.js';
import type { Repeat } from './streak.js';

/** Dollars as a catalog may write them: above 0, at most 10,000, to the micro-dollar (what budgets count in). */
export const usdSchema = z
  .number({ error: 'must be a number' })
  .gt(0, 'must be above 0')
  .max(10_000, 'must be at most 10000')
  .refine((v) => Math.abs(v * 1e6 - Math.round(v * 1e6)) < 1e-6, 'must have at most 6 decimals (a micro-dollar)');

/**
 * An amount in a catalog's lists (a streak's steps, prizes, referral amounts): sats, or
 * `{ "usd": x }`; read it with satsAt (core/price.ts) when a claim is decided.
 */
export const amountSchema = z.union(
  [z.number().int('must be a whole number of sats').min(1, 'must be at least 1').max(10_000_000, 'must be at most 10000000'), z.strictObject({ usd: usdSchema })],
  { error: 'must be sats (a whole number) or { "usd": dollars }' },
);

const satsSchema = z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(10_000_000, 'must be at most 10000000');

const repeatSchema = z.discriminatedUnion(
  'kind',
  [
    z.object({ kind: z.literal('once') }),
    z.object({ kind: z.literal('daily') }),
    z.object({ kind: z.literal('cooldown'), seconds: z.number().int().min(0) }),
    // A login streak (issue 37): day n pays sats[min(n, length) - 1]; a step may be { "usd": x } (issue 38).
    z.object({
      kind: z.literal('streak'),
      sats: z.array(amountSchema, { error: 'must be a list of sats or { "usd": dollars }, day 1 first' }).min(1, 'must hold at least one day').max(366),
    }),
  ],
  { error: 'must be { "kind": "once" | "daily" | "cooldown" | "streak" } (cooldown with "seconds", streak with "sats")' },
);

const entrySchema = z
  .object(
    {
      id: z
        .string({ error: 'must be a string' })
        .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'must be 1 to 64 lowercase letters, digits, dots, dashes or underscores, starting with a letter or digit'),
      title: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
      // Absent on a streak (its amounts are its steps, repeat.sats) and on an entry priced in dollars.
      sats: satsSchema.optional(),
      // Issue 38: priced in dollars, turned into sats at the price when a claim is decided (core/price.ts).
      usd: usdSchema.optional(),
      repeat: repeatSchema,
      minPlaySeconds: z.number({ error: 'must be a number' }).int('must be a whole number').min(0, 'must be at least 0').max(86_400, 'must be at most 86400').optional(),
      proof: z.literal('server', { error: 'must be "server" (a proof signed by the game\'s server)' }).optional(),
      hold: z.boolean({ error: 'must be true or false' }).optional(),
      payout: z.enum(['instant', 'balance'], { error: 'must be "instant" (paid at once) or "balance" (credited to the player\'s balance)' }).optional(),
    },
    { error: 'must be an object { "id", "title", "sats", "repeat" }' },
  )
  .check((ctx) => {
    const { sats, usd, repeat } = ctx.value;
    // A streak's amounts are its steps; `sats` (or `usd`), if written, can only be its first day's.
    if (repeat.kind === 'streak') {
      const first = repeat.sats[0];
      if (usd !== undefined && !(first !== undefined && inDollars(first) && first.usd === usd))
        ctx.issues.push({ code: 'custom', input: ctx.value, path: ['usd'], message: 'must be left out of a streak (its amounts are repeat.sats)' });
      else if (sats !== undefined && sats !== first)
        ctx.issues.push({ code: 'custom', input: ctx.value, path: ['sats'], message: 'must be left out of a streak (its amounts are repeat.sats)' });
    } else if ((sats === undefined) === (usd === undefined))
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        message: sats === undefined ? 'has no amount: give "sats" (a whole number) or "usd" (dollars)' : 'has both "sats" and "usd": give exactly one of them',
      });
  });

/** A tournament (issue 37): prizes by place, paid when the game's server posts a period's results; never claimed by a client. */
const tournamentSchema = z.strictObject(
  {
    id: entrySchema.shape.id,
    kind: z.literal('tournament'),
    title: entrySchema.shape.title,
    // Issue 38: a prize may be { "usd": x }, turned into sats at the price when the results are posted.
    prizes: z
      .array(amountSchema, { error: 'must be a list of sats or { "usd": dollars }, by place' })
      .min(1, 'must hold at least one prize')
      .max(10_000, 'must be at most 10000 places'),
    hold: entrySchema.shape.hold,
    payout: entrySchema.shape.payout,
  },
  { error: 'must be an object { "id", "kind": "tournament", "title", "prizes" }' },
);

const sats = (what: string) =>
  z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(10_000_000, 'must be at most 10000000').describe(what);

/** A referral program (issue 37): both rewards (sats, or dollars: issue 38), the play it waits for, the referrer's daily cap. */
const referralSchema = z
  .object(
    {
      id: entrySchema.shape.id,
      kind: z.literal('referral'),
      title: entrySchema.shape.title,
      referrerSats: sats("the referrer's reward").optional(),
      refereeSats: sats("the referee's reward").optional(),
      referrerUsd: usdSchema.optional(),
      refereeUsd: usdSchema.optional(),
      afterPlaySeconds: z.number({ error: 'must be a number' }).int('must be a whole number').min(0, 'must be at least 0').max(31_536_000, 'must be at most 31536000'),
      afterAchievement: z.string({ error: "must be a string (an achievement's id)" }).optional(),
      perReferrerDaily: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').optional(),
    },
    { error: 'must be an object { "id", "kind": "referral", "title", "referrerSats", "refereeSats", "afterPlaySeconds" }' },
  )
  .check((ctx) => {
    // Each side's reward: exactly one of `<side>Sats` and `<side>Usd`.
    for (const side of ['referrer', 'referee'] as const) {
      const inSats = ctx.value[`${side}Sats`] !== undefined;
      if (inSats !== (ctx.value[`${side}Usd`] === undefined))
        ctx.issues.push({
          code: 'custom',
          input: ctx.value,
          message: inSats
            ? `has both "${side}Sats" and "${side}Usd": give exactly one of them`
            : `has no ${side} reward: give "${side}Sats" (a whole number) or "${side}Usd" (dollars)`,
        });
    }
  });

/**
 * An achievement as the catalog holds it: worth `sats`, or `usd` turned into sats at the price
 * when a claim is decided (exactly one of them; read its amount through amountOf).
 */
export type Achievement = Omit<CatalogEntry, 'sats' | 'usd'> & Priced;
type Priced = { sats: number; usd?: undefined } | { usd: number; sats?: undefined };

/** An achievement as the catalog holds it: an Achievement whose streak's steps may also be in dollars (`{ usd }`, issue 38). */
export type CatalogAchievement = Omit<CatalogEntry, 'sats' | 'usd' | 'repeat'> & { repeat: Repeat } & Priced;

/** A tournament as the catalog holds it: its prizes in sats or in dollars (`{ usd }`, issue 38); GET /v1/catalog shows them in sats (catalog-at.ts). */
export type Tournament = Omit<TournamentCatalogEntry, 'prizes' | 'prizesUsd'> & { prizes: Amount[] };

/** An achievement's amount, for satsAt (core/price.ts). */
export const amountOf = (a: CatalogAchievement): Amount => (a.usd !== undefined ? { usd: a.usd } : a.sats);

/** The catalog's entries by `kind`: absent, an achievement. */
const KINDS: Record<string, z.ZodType> = { tournament: tournamentSchema, referral: referralSchema };
const kindOf = (v: unknown) => (v !== null && typeof v === 'object' && 'kind' in v ? (v as { kind: unknown }).kind : undefined);
const entryOf = (v: unknown): z.ZodType =>
  kindOf(v) === undefined ? entrySchema : (KINDS[String(kindOf(v))] ?? z.never({ error: `kind must be one of: ${Object.keys(KINDS).join(', ')} (or absent: an achievement)` }));

const entriesSchema = z
  .array(z.unknown(), { error: 'must be a list of achievements' })
  .min(1, 'must hold at least one achievement')
  .transform((list, ctx) =>
    list.map((v, i) => {
      const r = entryOf(v).safeParse(v);
      if (r.success) return r.data as CatalogItem;
      for (const issue of r.error.issues) ctx.issues.push({ ...issue, path: [i, ...issue.path] } as never);
      return v as CatalogAchievement;
    }),
  );

/** A catalog's entry: an achievement a client claims, or a program the relay pays by itself (never claimable). */
export type CatalogItem = CatalogAchievement | Tournament | ReferralProgram;

/**
 * What each achievement is worth: the relay's to decide, never the client's. Its programs beside
 * (tournaments, referrals: paid by the relay, never claimed by a client), each only when it has one.
 */
export type Catalog = ReadonlyMap<string, CatalogAchievement> & {
  readonly tournaments?: ReadonlyMap<string, Tournament>;
  readonly referrals?: ReadonlyMap<string, ReferralProgram>;
};

const kindIs =
  <K extends string>(kind: K) =>
  (e: CatalogItem): e is Extract<CatalogItem, { kind: K }> =>
    'kind' in e && e.kind === kind;
const isTournament = kindIs('tournament');
const isReferral = kindIs('referral');

/** The checked entries as a catalog: achievements by id, and its programs beside them. */
function catalogOf(entries: readonly CatalogItem[]): Catalog {
  const achievements = new Map(entries.filter((e): e is CatalogAchievement => !('kind' in e && e.kind)).map((a) => [a.id, a]));
  const tournaments = entries.filter(isTournament);
  const referrals = entries.filter(isReferral);
  return Object.assign(
    achievements,
    tournaments.length ? { tournaments: new Map(tournaments.map((t) => [t.id, t])) } : {},
    referrals.length ? { referrals: new Map(referrals.map((r) => [r.id, r])) } : {},
  );
}

/** A program's id (a tournament's, a referral's): a client's claim of it is refused, never decided. */
export const isProgram = (catalog: Catalog, id: string): boolean => catalog.tournaments?.has(id) === true || catalog.referrals?.has(id) === true;

/** The catalog's referral programs (none: the referral code is never read on the claim path). */
export const referralPrograms = (catalog: Catalog): ReferralProgram[] => [...(catalog.referrals?.values() ?? [])];

/** The catalog's achievements. */
export const achievementsOf = (catalog: Catalog): CatalogAchievement[] => [...catalog.values()];

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
  // A login streak (issue 37): `sats` written in code is its first day's.
  { id: 'login', title: 'Login streak', sats: 10, repeat: { kind: 'streak', sats: [10, 20, 30, 50] } },
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
      const named = parsed.data.find((b) => b.id === a.afterAchievement);
      if (!named || ('kind' in named && named.kind))
        problems.push(`achievements[${i}] (id ${JSON.stringify(a.id)}): afterAchievement must be the id of an achievement in the catalog`);
    });
  }
  return problems.length || !parsed.success ? { problems } : { entries: parsed.data.map((e) => ('kind' in e && e.kind ? e : withSats(e as CatalogAchievement))) };
}

/**
 * A streak's entry carries its first day's amount (what a client shows before the relay decides
 * the day): its sats, or its `usd` when day 1 is in dollars.
 */
function withSats(a: CatalogAchievement): CatalogAchievement {
  // A streak may be written with neither (its amounts are its steps).
  const e = a as Omit<CatalogAchievement, 'sats' | 'usd'> & { sats?: number; usd?: number };
  if (e.repeat.kind !== 'streak' || e.sats !== undefined || e.usd !== undefined) return a;
  const first = e.repeat.sats[0]!;
  return inDollars(first) ? { ...e, usd: first.usd, sats: undefined } : { ...e, sats: first, usd: undefined };
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
export function createCatalog(entries: ReadonlyArray<CatalogItem | CatalogEntry>): Catalog {
  const checked = checkCatalog(entries);
  if ('problems' in checked) throw new Error(`Invalid catalog: ${checked.problems.join('; ')}`);
  return catalogOf(checked.entries);
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
  return catalogOf(checked.entries);
}
