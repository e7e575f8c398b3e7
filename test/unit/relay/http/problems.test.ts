// A use case's refusal (core/refusal.ts) as the HTTP side answers it (http/problems.ts).
import { describe, expect, it } from 'vitest';
import { Refusal } from '../../../../src/relay/core/refusal.js';
import { PROBLEMS, problemBody, problemOf } from '../../../../src/relay/http/problems.js';

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
