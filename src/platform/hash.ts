/** SHA-256 through the runtime's native hasher (no node:crypto load on the CLI path). */
export interface Sha256 {
  update(chunk: Uint8Array | string): void;
  hex(): string;
}

export function sha256(): Sha256 {
  const h = new Bun.CryptoHasher("sha256");
  return {
    update: (chunk) => { h.update(chunk); },
    hex: () => h.digest("hex"),
  };
}
