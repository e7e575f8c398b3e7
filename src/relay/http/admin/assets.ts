import { readFile } from 'node:fs/promises';

/** Lets the page's own script and styles run, and nothing else. */
export const ADMIN_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

// From source the page and its TypeScript sit beside this module, and the script is compiled on
// first use (esbuild is a dev dependency); the built package ships both ready under
// dist/relay/admin/ (every bundle in the relay's dist is one folder deep, hence the `../relay/`).
const fromSource = import.meta.url.endsWith('.ts');
const DIR = fromSource ? new URL('./', import.meta.url) : new URL('../relay/admin/', import.meta.url);

async function compileScript(): Promise<string> {
  if (!fromSource) return readFile(new URL('app.js', DIR), 'utf8');
  const { transform } = await import('esbuild');
  const source = await readFile(new URL('app.ts', DIR), 'utf8');
  return (await transform(source, { loader: 'ts', format: 'iife', target: 'es2020' })).code;
}

let loaded: Promise<{ html: string; js: string }> | undefined;

/** The operator's page and its script, read (and compiled from source) once. */
export function adminAssets(): Promise<{ html: string; js: string }> {
  loaded ??= Promise.all([readFile(new URL('page.html', DIR), 'utf8'), compileScript()]).then(([html, js]) => ({ html, js }));
  return loaded;
}
