/**
 * A fast 128-bit non-cryptographic string hash (four 32-bit multiply-xorshift lanes).
 * For change detection and idempotency request comparison, where the cost of loading
 * node:crypto on every CLI call (~4 ms) would exceed the rest of the call. Never use it
 * where an adversary choosing inputs matters (artifacts use SHA-256 in platform/).
 */
export function hash128(text: string): string {
  let h1 = 0x9e3779b1, h2 = 0x85ebca77, h3 = 0xc2b2ae3d, h4 = 0x27d4eb2f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x85ebca6b);
    h2 = Math.imul(h2 ^ c, 0xc2b2ae35);
    h3 = Math.imul(h3 ^ c, 0x27d4eb2f);
    h4 = Math.imul(h4 ^ c, 0x165667b1);
    h1 ^= h1 >>> 15; h2 ^= h2 >>> 13; h3 ^= h3 >>> 16; h4 ^= h4 >>> 14;
  }
  const n = text.length;
  h1 = Math.imul(h1 ^ (h2 >>> 16) ^ n, 0x85ebca6b); h1 ^= h1 >>> 13;
  h2 = Math.imul(h2 ^ (h3 >>> 16) ^ n, 0xc2b2ae35); h2 ^= h2 >>> 16;
  h3 = Math.imul(h3 ^ (h4 >>> 16) ^ n, 0x27d4eb2f); h3 ^= h3 >>> 15;
  h4 = Math.imul(h4 ^ (h1 >>> 16) ^ n, 0x165667b1); h4 ^= h4 >>> 13;
  return [h1, h2, h3, h4].map((h) => (h >>> 0).toString(16).padStart(8, "0")).join("");
}
