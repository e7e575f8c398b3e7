// docs/operating.md's table is the list of series an operator builds dashboards and alerts from:
// every series the relay registers must be there, by its name and labels.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../../../src/relay/ops/metrics.js';

/** Every series createMetrics can register: each optional gauge's source given. */
function allSeries() {
  const read = async () => 0;
  const { registry } = createMetrics({
    needsReview: read,
    held: read,
    budgetUsedSats: read,
    walletBalanceSats: read,
    balancesOwedSats: read,
    budgetUsedUsd: read,
    price: () => ({ btcUsd: 65_000, at: Date.now() }),
  });
  return registry
    .getMetricsAsArray()
    .filter((m) => !m.name.startsWith('rewardbus_process_'))
    .map((m) => {
      // prom-client keeps each metric's label names on it; its types do not say so.
      const labels = (m as { labelNames?: readonly string[] }).labelNames ?? [];
      return labels.length ? `${m.name}{${labels.join(',')}}` : m.name;
    });
}

/** The series docs/operating.md's metrics table names, as written (`name{label,label}`). */
function documented(): string[] {
  const doc = readFileSync('docs/operating.md', 'utf8');
  const rows = [...doc.matchAll(/^\| (`rewardbus_[^|]*) \|/gm)].map((m) => m[1]!);
  return rows.flatMap((cell) => [...cell.matchAll(/`(rewardbus_[a-z_]+(?:\{[a-z_,]+\})?)`/g)].map((m) => m[1]!));
}

describe("docs/operating.md's metrics", () => {
  it('lists every series the relay registers, with its labels', () => {
    const listed = documented();
    expect(allSeries().filter((s) => !listed.includes(s))).toEqual([]);
  });

  it('lists no series the relay does not register', () => {
    const series = allSeries();
    expect(documented().filter((s) => s !== 'rewardbus_process_*' && !series.includes(s))).toEqual([]);
  });
});
