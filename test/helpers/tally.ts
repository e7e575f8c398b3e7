/** How many times each value occurs: `{ paid: 3, failed: 1 }`, for a test's summary line. */
export function tally(values: Iterable<string>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}
