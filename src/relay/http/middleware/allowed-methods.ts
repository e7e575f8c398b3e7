import type { Context, Hono } from 'hono';
import { RelayProblem } from '../problems.js';

/**
 * 405 with `Allow` for a method a known path does not take, before any authentication runs (a
 * wrong method is wrong whoever asks). The table is read from the app's own routes on first use,
 * so it cannot drift from them.
 */
type Route = { pattern: RegExp; allow: string; methods: ReadonlySet<string> };

/** The check as the door runs it (middleware/door.ts): throws 405 for a method `path` does not take. */
export function methodCheck(app: Hono<never>) {
  let table: Route[] | undefined;
  const build = () => {
    const byPath = new Map<string, Set<string>>();
    for (const r of app.routes) {
      if (r.method === 'ALL' || r.path.includes('*')) continue;
      const methods = byPath.get(r.path) ?? byPath.set(r.path, new Set(['OPTIONS'])).get(r.path)!;
      methods.add(r.method);
      if (r.method === 'GET') methods.add('HEAD');
    }
    return [...byPath].map(([path, methods]) => ({
      pattern: new RegExp(`^${path.replace(/\/$/, '').replace(/:[^/]+/g, '[^/]+')}/?$`),
      allow: [...methods].sort().join(', '),
      methods,
    }));
  };
  // The route each path came to, remembered: a claim's path is the same every time (ids vary, so
  // the memory is bounded).
  const byPath = new Map<string, Route | undefined>();
  return function allowedMethod(c: Context, path: string): void {
    table ??= build();
    let route = byPath.get(path);
    if (route === undefined && !byPath.has(path)) {
      route = table.find((r) => r.pattern.test(path));
      if (byPath.size >= 1000) byPath.clear();
      byPath.set(path, route);
    }
    if (route && !route.methods.has(c.req.method)) {
      throw new RelayProblem('method_not_allowed', `${path} takes ${route.allow}`, { Allow: route.allow });
    }
  };
}
