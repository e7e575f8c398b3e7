import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { CatalogEntry } from '../../wire/relay-api.js';

const repeatSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('once') }),
  z.object({ kind: z.literal('daily') }),
  z.object({ kind: z.literal('cooldown'), seconds: z.number().int().min(0) }),
]);

const entrySchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'ids are lowercase letters, digits, dot, dash, underscore'),
  title: z.string().min(1).max(100),
  sats: z.number().int().min(1).max(10_000_000),
  repeat: repeatSchema,
});

const catalogSchema = z.object({ achievements: z.array(entrySchema).min(1) }).refine(
  (c) => new Set(c.achievements.map((a) => a.id)).size === c.achievements.length,
  'achievement ids must be unique',
);

/** What each achievement is worth: the relay's to decide, never the client's. */
export type Catalog = ReadonlyMap<string, CatalogEntry>;

/** The demo's achievements, one of each repeat policy; used when RELAY_CATALOG is not set. */
export const DEFAULT_CATALOG: readonly CatalogEntry[] = [
  { id: 'first-coin', title: 'First coin', sats: 21, repeat: { kind: 'once' } },
  { id: 'level-complete', title: 'Level complete', sats: 100, repeat: { kind: 'once' } },
  { id: 'daily-login', title: 'Daily login', sats: 10, repeat: { kind: 'daily' } },
  { id: 'coin-streak', title: 'Ten coins in a row', sats: 5, repeat: { kind: 'cooldown', seconds: 30 } },
];

export function createCatalog(entries: readonly CatalogEntry[]): Catalog {
  const parsed = catalogSchema.parse({ achievements: entries });
  return new Map(parsed.achievements.map((a) => [a.id, a]));
}

/**
 * Reads `{ "achievements": [...] }` from a JSON file, failing loudly on a bad entry. Errors name
 * the setting the path came from, so an operator knows what to fix.
 */
export function loadCatalogFile(path: string, setting = 'RELAY_CATALOG'): Catalog {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code ? `cannot be read (${code})` : `is not valid JSON (${(err as Error).message})`;
    throw new Error(`${setting}: ${path} ${why}`);
  }
  const result = catalogSchema.safeParse(json);
  if (!result.success) throw new Error(`${setting}: invalid catalog ${path}: ${z.prettifyError(result.error)}`);
  return createCatalog(result.data.achievements);
}
