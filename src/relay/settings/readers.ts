import { isIP } from 'node:net';
import { secretList } from '../core/secret-list.js';

// How a setting's text becomes its value: each returns undefined for a value it does not accept.

/** A whole number from `min` to `max`, written as digits only (no sign, no exponent, no unit). */
export const wholeNumber =
  (min: number, max = Number.MAX_SAFE_INTEGER) =>
  (v: string): number | undefined => {
    if (!/^\d+$/.test(v.trim())) return undefined;
    const n = Number(v.trim());
    return n >= min && n <= max ? n : undefined;
  };

/** A whole number of seconds from `min`, as milliseconds. */
export const secondsAsMs = (min: number) => (v: string) => {
  const seconds = wholeNumber(min)(v);
  return seconds === undefined ? undefined : seconds * 1000;
};

export const text = (v: string): string => v;

export const httpUrl = (v: string): string | undefined => {
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !/\s/.test(v) ? v : undefined;
  } catch {
    return undefined;
  }
};

/** Visible ASCII, no spaces: what a key pasted with a stray newline or quote is not. */
export const token = (v: string): string | undefined => (/^[\x21-\x7e]+$/.test(v) ? v : undefined);

/** Comma-separated tokens as the service gave them (WEBHOOK_SECRET), kept as written. */
export const tokenList = (v: string): string | undefined => (v.split(',').every((s) => token(s.trim())) ? v : undefined);

/**
 * Comma-separated secrets (the first signs, all verify), each at least 32 visible characters, no
 * empty one: the list joined again by commas, as the relay's options take it.
 */
export const strongSecrets = (v: string): string | undefined => {
  const list = secretList(v);
  const entries = v.split(',').length;
  return list.length === entries && list.every((s) => s.length >= 32 && /^[\x21-\x2b\x2d-\x7e]+$/.test(s)) ? list.join(',') : undefined;
};

/** 1 / true or 0 / false. */
export const flag = (v: string): boolean | undefined => (v === '1' || v === 'true' ? true : v === '0' || v === 'false' ? false : undefined);

/** One of `values`, spelled exactly. */
export const oneOf =
  <const T extends string>(values: readonly T[]) =>
  (v: string): T | undefined =>
    (values as readonly string[]).includes(v) ? (v as T) : undefined;

/** An IP address, or a host name as DNS spells one (a name cannot end in a number: 999.1.1.1 is neither). */
export function isHost(v: string): boolean {
  if (isIP(v)) return true;
  const labels = v.replace(/\.$/, '').split('.');
  return v.length <= 253 && labels.every((l) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(l)) && !/^\d+$/.test(labels.at(-1)!);
}

/**
 * A browser origin as browsers send it: scheme and host, a port only when not the default, no
 * path, no trailing slash, lowercase (an origin spelled otherwise would never match). Schemes
 * other than http(s) (capacitor://localhost, app://game) are taken as written.
 */
export function isOrigin(v: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#\s@]+$/.test(v)) return false;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin === v : true;
  } catch {
    return false;
  }
}

/** `*`, or origins separated by commas; empty: none. */
export const origins = (v: string): string[] | undefined => {
  const list = v
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  return list.every((o) => o === '*' || isOrigin(o)) ? list : undefined;
};

export function postgresUrl(v: string): string | undefined {
  try {
    return /^postgres(ql)?:\/\/./.test(v) && new URL(v).hostname ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Dollars: digits with at most 6 decimals (a micro-dollar), from 0, no sign, no exponent, no `$`. */
export const dollars = (v: string): number | undefined => (/^\d{1,9}(\.\d{1,6})?$/.test(v.trim()) ? Number(v.trim()) : undefined);
