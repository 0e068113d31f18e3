/**
 * The monotonic clock (`performance.now()`) moved on by hand, for code that measures
 * durations with it: bun:test's setSystemTime moves only the wall clock.
 */
export function monotonicSkew(): { skew: number; restore: () => void } {
  const real = performance.now;
  const clock = { skew: 0, restore: () => { performance.now = real; } };
  performance.now = () => real.call(performance) + clock.skew;
  return clock;
}
