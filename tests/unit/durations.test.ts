import { describe, expect, test } from "bun:test";
import { isDuration, parseDuration } from "../../src/domain/durations.ts";

describe("parseDuration", () => {
  test.each([
    ["300ms", 300],
    ["1s", 1000],
    ["1.5h", 5_400_000],
    ["2h45m", 9_900_000],
    ["2d", 172_800_000],
    ["1d12h", 129_600_000],
    ["+1m", 60_000],
    [".5s", 500],
    ["5.s", 5000],
    ["1000us", 1],
    ["1000µs", 1],
    ["1000μs", 1],
    ["1000000ns", 1],
    ["1h0m0s", 3_600_000],
    ["0.1h", 360_000],
  ])("%s = %d ms", (s, ms) => {
    expect(parseDuration(s)).toBe(ms);
  });

  test("sub-millisecond durations are fractional", () => {
    expect(parseDuration("1ns")).toBe(0.000001);
  });

  test.each([
    ["", "empty"],
    [" 1h", "spaces"],
    ["1h ", "spaces"],
    ["-1h", "positive"],
    ["0", "missing unit"],
    ["0s", "positive"],
    ["10", "missing unit"],
    ["1.5", "missing unit"],
    ["1w", 'unknown unit "w"'],
    ["1H", 'unknown unit "H"'],
    ["1h30", "unexpected"],
    ["h", "missing number"],
    [".h", "missing number"],
    ["1h-30m", "unexpected"],
    ["1 h", "unexpected"],
    ["99999999999d", "too large"],
  ])("rejects %p (%s)", (s, fragment) => {
    expect(() => parseDuration(s)).toThrow(fragment);
    expect(isDuration(s)).toBe(false);
  });

  test("the error names the input and the units", () => {
    expect(() => parseDuration("3x")).toThrow(/invalid duration "3x".*units: ns us µs ms s m h d/);
  });

  test("isDuration", () => {
    expect(isDuration("2h")).toBe(true);
    expect(isDuration(7200)).toBe(false);
    expect(isDuration(null)).toBe(false);
  });
});
