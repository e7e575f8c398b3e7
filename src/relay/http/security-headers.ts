/** The relay serves JSON to games, never pages: nothing of it may be framed, sniffed or run. */
export const SECURITY_HEADERS = [
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cross-Origin-Resource-Policy', 'cross-origin'],
] as const;
