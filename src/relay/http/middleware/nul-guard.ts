import type { Context } from 'hono';
import { RelayProblem } from '../problems.js';

/**
 * A path or query that decodes to NUL (`%00`) is a 400 before any route reads it: PostgreSQL's
 * text cannot hold NUL, so an id or filter carrying one would fail in the database as a 500.
 * (Bodies are checked where they are parsed; Node refuses NUL in headers itself.)
 */
export function refuseNul(c: Context): void {
  if (c.req.url.includes('%00')) throw new RelayProblem('bad_request', 'A path or query must not contain NUL (%00)');
}
