/**
 * A relayUrl is a whole http:// or https:// address, or in a page a path on the page's own host
 * (`/rewards`, behind the same proxy). Anything else is a typo that would otherwise show only as
 * a relay never reached: `localhost:8787` (read as the scheme `localhost:`), `127.0.0.1:8787` or
 * `rewards.example.com` (read as paths of the page). Said at once, where the bus is made.
 */
export function checkRelayUrl(url: string): void {
  const inPage = typeof location !== 'undefined';
  if (/^https?:\/\//i.test(url) || (inPage && url[0] === '/')) return;
  throw new TypeError(`relayUrl ${JSON.stringify(url)} needs http:// or https://${inPage ? ' (or a path: /…)' : ''}, e.g. http://localhost:8787`);
}
