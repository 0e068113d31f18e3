/**
 * The BlobStore port: content-addressed artifact bytes. Keys are SHA-256 hex digests;
 * the same bytes are stored once. Drivers: fs.ts (local disk) now; an unstorage-backed
 * driver (s3 and friends) can implement the same port later.
 */
export interface StoredBlob {
  sha256: string;
  size: number;
  /** the first bytes, for content-type sniffing */
  head: Uint8Array;
}

export interface BlobStore {
  /**
   * Streams `body` into the store (at most `maxBytes`, else throws payload_too_large).
   * `mime` is remembered the first time a digest is stored.
   */
  put(body: AsyncIterable<Uint8Array> | Uint8Array, maxBytes: number, mime: (head: Uint8Array) => string): Promise<StoredBlob & { mime: string; hold: BlobHold }>;
  /** The bytes of a digest as a stream with its remembered type, or null when absent. */
  get(sha256: string): Promise<{ body: ReadableStream<Uint8Array>; size: number; mime: string } | null>;
  /**
   * Whether the bytes of a digest are stored. Synchronous: a card write checks the uris it
   * names inside its transaction, so a collection (artifacts gc, which removes under the
   * write lock) cannot run between the check and the commit.
   */
  has(sha256: string): boolean;
  /** Every stored blob: its digest, size and when it was last stored (ms since the epoch). */
  list(): AsyncIterable<{ sha256: string; size: number; storedAt: number }>;
  /**
   * Removes a blob unless it was stored (again) after `storedBefore`. Called inside a
   * write transaction (artifacts gc), so it never runs between an upload's `ensure()` and
   * its commit. Returns whether it was removed.
   */
  remove(sha256: string, storedBefore: number): boolean;
}

/**
 * What an upload keeps until its card write is done: bytes that were already stored keep
 * a spare copy, so a collection (artifacts gc) between the upload and its write cannot
 * leave the card naming bytes that are gone.
 */
export interface BlobHold {
  /** Puts the bytes back in place if they were removed meanwhile (call inside the card write's transaction). */
  ensure(): void;
  /** Drops the spare copy (after the card write, committed or not). */
  release(): void;
}
