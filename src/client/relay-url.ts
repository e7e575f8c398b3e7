/**
 * A relayUrl is a whole http:// or https:// address, or in a page a path on the page's own host
 * (`/rewards`, behind the same proxy). Anything else is a typo that would otherwise show only as
 * a relay never reached: `localhost:8787` (read as the scheme `localhost:`), `127.0.0.1:8787` or
 * `rewards.example.com` (read as paths of the page). Said at once, where the bus is made.
 */
export function checkRelayUrl(url: string): void {
  const scheme = /^([a-z][a-z\d+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  const inPage = typeof location !== 'undefined';
  if (scheme ? scheme === 'http' || scheme === 'https' : inPage && url.startsWith('/')) return;
  throw new TypeError(
    `relayUrl ${JSON.stringify(url)} is no ${inPage ? 'http:// or https:// address, nor a path on this page’s host (/…)' : 'http:// or https:// address'}: write it whole, e.g. http://localhost:8787`,
  );
}
