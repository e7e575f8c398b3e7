/** What a secret is replaced with wherever it would be written. */
export const REDACTED = '[redacted]';

/**
 * `apikey: x`, `api_key=x`, `"apiKey":"x"`, `Authorization: Bearer x`: a credential, by its shape
 * (a value of 12 or more token characters, so prose such as "API_KEY: paying" is left alone).
 */
const CREDENTIAL = /((?:api[_-]?key|authorization|secret|token)["']?\s*[:=]\s*["']?(?:bearer\s+)?)[A-Za-z0-9_\-.~+/=]{12,}/gi;

/**
 * Text with every known secret and anything shaped like a credential taken out. For text the
 * relay did not write itself (the payments service's error messages) before it reaches a log
 * line or a client.
 */
export function scrub(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) if (s.length >= 8 && out.includes(s)) out = out.split(s).join(REDACTED);
  // Most text names no credential at all: looking for the names alone takes half the replace's time.
  return CREDENTIAL_NAME.test(out) ? out.replace(CREDENTIAL, `$1${REDACTED}`) : out;
}

/** The names CREDENTIAL starts with: where none is, it cannot match. */
const CREDENTIAL_NAME = /api[_-]?key|authorization|secret|token/i;
