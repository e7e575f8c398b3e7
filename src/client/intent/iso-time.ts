let second = NaN;
let prefix = '';
const MILLIS: string[] = [];

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
  // The milliseconds' text is made once each and kept: no number-to-text and slice per call.
  return prefix + (MILLIS[milli] ??= `${1000 + milli}Z`.slice(1));
}
