import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { applyFunction } from '../../../../../src/relay/store/postgres/apply-function.js';
import { MIGRATIONS } from '../../../../../src/relay/store/postgres/migrations.js';

// Each shipped PostgreSQL step's text, pinned: a database that ran a step never runs it again, so
// an edit would leave databases that ran the old text and those that run the new one apart. Steps
// built from a template (apply-function.ts) are pinned too, so a change to the template shows here.
// A new step appends its hash; a lead renumbering steps at a merge moves hashes with them.
const SHIPPED = [
  '873e22e4a8faa0e2',
  'f9a8686ddcb03fd4',
  '2ca5a4f0da9f248e',
  '5bd9f740facdf914',
  'f2a02f9a6acaa942',
  '9f99e5d2700dea2a',
  '0b41a22479b2a061',
  'e50f1ed556bee454',
  '87bc0544881b490c',
  '4925d87a286c1516',
  '5089590f4bfcccab',
  '1b3698d0578ef8ff',
  '297b65cd5d3b13dc',
  '7a3fa59fed941940',
  '00b67ae56f6947b4',
  '67a3bf862ec4145a',
  'baa34bc2f97558d1',
  'ab52ce1cea5e1c76',
  // 19: rewardbus_apply from the template (issue 39).
  '164130b77e2c76ef',
  // 20: the claim facts' statement and rewardbus_apply's planned once per session (issue 39).
  '541dfd711603b66b',
  // 21: where players were seen, by time, to forget it past the self-referral window.
  '38e3cca38e7be1b2',
];

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

describe('PostgreSQL migrations', () => {
  it('keeps every shipped step byte for byte', () => {
    expect(MIGRATIONS.slice(0, SHIPPED.length).map(hash)).toEqual(SHIPPED);
  });

  it('has a pinned hash for every step', () => {
    expect(MIGRATIONS.length).toBe(SHIPPED.length);
  });

  it('makes rewardbus_apply from the template in the latest step that makes it', () => {
    expect([...MIGRATIONS].reverse().find((step) => step.includes('FUNCTION rewardbus_apply'))).toContain(applyFunction({ genericPlans: true }));
    expect(applyFunction()).toMatch(/^CREATE OR REPLACE FUNCTION rewardbus_apply\(p_items jsonb, p_reserving text\[\], p_told text\[\], p_wait boolean\)/);
  });
});
