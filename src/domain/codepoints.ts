/**
 * Strings as sequences of code points: cut and compared. Pure and import-free: the
 * server, the CLI and the board in the browser (ui/) use this one copy.
 *
 * A JS string is UTF-16: a character above U+FFFF (an emoji, a rare CJK ideograph) is two
 * units, a surrogate pair. A cut between the two leaves a lone surrogate, which is not
 * text: it has no UTF-8 form, and strict JSON readers (jq, serde_json) refuse its escape.
 */

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/** The start of `s`: at most `max` UTF-16 units, one fewer when the cut would split a surrogate pair. */
export function leading(s: string, max: number): string {
  if (s.length <= max) return s;
  return s.slice(0, max > 0 && isHighSurrogate(s.charCodeAt(max - 1)) ? max - 1 : max);
}

/** The end of `s`: at most `max` UTF-16 units, one fewer when the cut would split a surrogate pair. */
export function trailing(s: string, max: number): string {
  if (s.length <= max) return s;
  const from = s.length - max;
  return s.slice(isLowSurrogate(s.charCodeAt(from)) ? from + 1 : from);
}

/** Compare strings by Unicode code point (= UTF-8 byte order = SQLite BINARY). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) { // surrogates encode code points above every BMP char
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}
