let second = NaN;
let prefix = '';

/**
 * `new Date(ms).toISOString()`, for unlock(): that call costs more than the rest of an unlock,
 * so the part up to the second (`2026-11-23T12:16:05.`) is made once a second, the milliseconds appended.
 */
export function isoTime(ms: number): string {
  const milli = ms % 1000;
  if (ms - milli !== second) {
    second = ms - milli;
    prefix = new Date(second).toISOString().slice(0, 20);
  }
  return prefix + `${1000 + milli}Z`.slice(1);
}
