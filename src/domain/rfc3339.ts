/**
 * RFC 3339 timestamps, apart from field validation: filters parse them too, and a list
 * call should not load every field rule to do it (docs/decisions.md, "CLI cold path").
 */

/**
 * Milliseconds since the epoch for an RFC 3339 timestamp with a time zone
 * (`2026-01-02T03:04:05Z`, `2026-01-02T03:04:05.5+02:00`), else undefined.
 * Calendar-checked: 2026-02-30 is rejected. Leap seconds (`:60`) are not accepted.
 * Digits finer than a millisecond are exact: a whole number when there are none (or
 * only zeros), else that number plus 0.5 ("strictly between it and the next"), so
 * Math.floor and Math.ceil round it the right way.
 */
export function parseRfc3339(s: string): number | undefined {
  const m = RFC3339_RE.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, se] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i])) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || se > 59) return undefined;
  let offsetMin = 0;
  if (m[8]) {
    const oh = Number(m[9]), om = Number(m[10]);
    if (oh > 23 || om > 59) return undefined;
    offsetMin = (m[8] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, se, 0);
  const digits = m[7] ? m[7].slice(1) : "";
  const ms = Number(digits.slice(0, 3).padEnd(3, "0"));
  const finer = /[1-9]/.test(digits.slice(3));
  return date.getTime() + ms - offsetMin * 60_000 + (finer ? 0.5 : 0);
}

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** True when `s` is written as an RFC 3339 timestamp, whether or not that day and time exist. */
export const isRfc3339Shape = (s: string): boolean => RFC3339_RE.test(s);

/** The first and last instants a stored timestamp (a four-digit year in UTC) can hold. */
export const TIME_MIN_MS = Date.parse("0000-01-01T00:00:00.000Z");
export const TIME_MAX_MS = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * The stored form of the instant `ms` (parseRfc3339): UTC with exactly three fractional
 * digits, as `Date.prototype.toISOString` writes it, digits finer than a millisecond
 * dropped. Stored in this one form, values order by time as text (in SQL and in memory).
 * Undefined when the instant falls outside the four-digit years in UTC
 * (`0000-01-01T00:30:00+01:00`): toISOString would write `-000001-...`.
 */
export function storedTime(ms: number): string | undefined {
  const whole = Math.floor(ms);
  return whole < TIME_MIN_MS || whole > TIME_MAX_MS ? undefined : new Date(whole).toISOString();
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(m) ? 30 : 31;
}
