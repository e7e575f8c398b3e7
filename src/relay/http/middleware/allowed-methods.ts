import type { Hono, MiddlewareHandler } from 'hono';
import { RelayProblem } from '../problems.js';

/**
 * 405 with `Allow` for a method a known path does not take, before any authentication runs (a
 * wrong method is wrong whoever asks). The table is read from the app's own routes on first use,
 * so it cannot drift from them.
 */
export function allowedMethods(app: Hono<never>): MiddlewareHandler {
  let table: Array<{ pattern: RegExp; allow: string; methods: ReadonlySet<string> }> | undefined;
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
  return async function allowedMethods(c, next) {
    table ??= build();
    const route = table.find((r) => r.pattern.test(c.req.path));
    if (route && !route.methods.has(c.req.method)) {
      throw new RelayProblem('method_not_allowed', `${c.req.path} takes ${route.allow}`, { Allow: route.allow });
    }
    await next();
  };
}
