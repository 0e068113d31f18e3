/**
 * Duration strings (SPEC "Duration syntax"): Go `time.ParseDuration` syntax plus a
 * `d` suffix for days. Examples: "300ms", "1.5h", "2h45m", "2d", "1d12h".
 * Durations here configure monitors, so they must be positive: a sign of `-`,
 * zero and a bare number are rejected. Pure, no imports.
 */

/** Nanoseconds per unit, as BigInt so fractions are exact to the nanosecond like Go. */
const UNIT_NS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  "\u00b5s": 1_000n, // µ micro sign
  "\u03bcs": 1_000n, // μ greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60n * 1_000_000_000n,
  h: 3_600n * 1_000_000_000n,
  d: 86_400n * 1_000_000_000n,
};

export const DURATION_UNITS: readonly string[] = ["ns", "us", "µs", "ms", "s", "m", "h", "d"];

const MAX_NS = (1n << 63n) - 1n;
const SEGMENT = /^(\d*)(?:\.(\d*))?([a-zµμ]+)/i;

function fail(s: string, why: string): never {
  throw new Error(
    `invalid duration ${JSON.stringify(s)}: ${why} (use a number and a unit, e.g. "300ms", "1.5h", "2h45m", "2d"; units: ${DURATION_UNITS.join(" ")})`,
  );
}

/** Parses a positive duration string and returns it in milliseconds (may be fractional below 1ms). */
export function parseDuration(s: string): number {
  if (typeof s !== "string") fail(String(s), "not a string");
  let rest = s.trim();
  if (rest !== s || rest === "") fail(s, "empty or padded with spaces");
  if (rest.startsWith("-")) fail(s, "durations must be positive");
  if (rest.startsWith("+")) rest = rest.slice(1);
  if (/^[0-9.]+$/.test(rest)) fail(s, "missing unit");
  let total = 0n;
  while (rest !== "") {
    const m = SEGMENT.exec(rest);
    if (!m) fail(s, `unexpected ${JSON.stringify(rest)}`);
    const [whole, intPart = "", fracPart = "", unitRaw = ""] = m;
    if (intPart === "" && fracPart === "") fail(s, `missing number before ${JSON.stringify(unitRaw)}`);
    const unit = UNIT_NS[unitRaw];
    if (unit === undefined) fail(s, `unknown unit ${JSON.stringify(unitRaw)}`);
    let ns = BigInt(intPart === "" ? "0" : intPart) * unit;
    if (fracPart !== "") ns += (BigInt(fracPart) * unit) / 10n ** BigInt(fracPart.length);
    total += ns;
    if (total > MAX_NS) fail(s, "too large");
    rest = rest.slice(whole.length);
  }
  if (total <= 0n) fail(s, "durations must be positive");
  return Number(total) / 1e6;
}

/** True when `s` is a string `parseDuration` accepts. */
export function isDuration(s: unknown): boolean {
  if (typeof s !== "string") return false;
  try {
    parseDuration(s);
    return true;
  } catch {
    return false;
  }
}
