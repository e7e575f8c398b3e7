// A use case's refusal (core/refusal.ts) as the HTTP side answers it (http/problems.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Refusal } from '../../../../src/relay/core/refusal.js';
import { PROBLEMS, type ProblemCode, problemBody, problemOf, RelayProblem } from '../../../../src/relay/http/problems.js';

describe('a refusal as a problem', () => {
  it('keeps its code, its detail and its status, and says when to come back', () => {
    const p = problemOf(new Refusal('too_many_players', 'This address may link 3 players a day', 7200));
    expect(p.headers).toEqual({ 'Retry-After': '7200' });
    expect(problemBody(p)).toMatchObject({ code: 'too_many_players', status: PROBLEMS.too_many_players[0], detail: 'This address may link 3 players a day' });
  });

  it('without a time to come back, no Retry-After', () => {
    const p = problemOf(new Refusal('link_refused'));
    expect(p.headers).toEqual({});
    expect(problemBody(p)).toMatchObject({ code: 'link_refused', status: 403, title: PROBLEMS.link_refused[1] });
  });
});

// docs/relay-api.md#errors is the list a game's developer reads, and each problem's `type` is a link
// to its code there: a code added, renamed or given another status must be said there too.
describe('docs/relay-api.md, Errors', () => {
  const doc = readFileSync('docs/relay-api.md', 'utf8');
  const from = doc.indexOf('\n## Errors\n');
  const table = doc.slice(from, doc.indexOf('\n## ', from + 1));
  /** Each row of the table: its status, and the codes its second cell names. */
  const rows = [...table.matchAll(/^\| (\d{3}) \| ([^|]+) \|/gm)].map((m) => ({ status: Number(m[1]), codes: [...m[2]!.matchAll(/`([a-z_]+)`/g)].map((c) => c[1]!) }));

  it('has a row for every problem code, with the status the relay answers it with', () => {
    for (const [code, [status]] of Object.entries(PROBLEMS)) {
      const statuses = rows.filter((r) => r.codes.includes(code)).map((r) => r.status);
      expect(statuses, `${code} has no row in docs/relay-api.md#errors`).not.toEqual([]);
      expect(new Set(statuses), `${code}'s rows say another status than ${status}`).toEqual(new Set([status]));
    }
  });

  it('names no code the relay does not answer', () => {
    expect(rows.flatMap((r) => r.codes).filter((c) => !(c in PROBLEMS))).toEqual([]);
  });

  it("has the anchor each problem's type links to", () => {
    const codes = Object.keys(PROBLEMS) as ProblemCode[];
    for (const code of codes) expect(problemBody(new RelayProblem(code)).type).toBe(`https://github.com/rewardbus/rewardbus/blob/main/docs/relay-api.md#${code}`);
    expect(
      codes.filter((code) => !doc.includes(`<a id="${code}"></a>`)),
      'codes with no <a id="…"></a> in docs/relay-api.md',
    ).toEqual([]);
  });
});
