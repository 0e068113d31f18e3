/**
 * Local content-addressed blob store: `<dir>/sha256/<2 hex>/<64 hex>`. Uploads stream to
 * a temp file while hashing, then rename into place (atomic; a crash leaves only a temp
 * file). A digest already present is not written twice. Paths are built only from a
 * validated digest, so nothing outside the store can be named.
 */
import { joinPath as join } from "../domain/paths.ts";
import { CardsError } from "../domain/errors.ts";
import { sha256 } from "../platform/hash.ts";
import { isAlive } from "../platform/process.ts";
import type { BlobHold, BlobStore, StoredBlob } from "./port.ts";

const DIGEST = /^[0-9a-f]{64}$/;
const HEAD_BYTES = 64;

/** node:fs loads on first use (~1.3 ms that calls without artifacts should not pay). */
const fs = (): typeof import("node:fs") => process.getBuiltinModule("node:fs") as typeof import("node:fs");

export function createFsBlobStore(dir: string): BlobStore {
  const pathOf = (digest: string) => join(dir, "sha256", digest.slice(0, 2), digest);
  return {
    async put(body, maxBytes, mimeOf): Promise<StoredBlob & { mime: string; hold: BlobHold }> {
      const f = fs();
      const tmp = join(dir, "tmp", `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
      // plain descriptor writes: the temp file exists before the first chunk, and a
      // refused or failed upload closes and removes it with nothing left in flight
      let fd: number;
      try {
        if (!swept) sweepTemp(join(dir, "tmp"));
        f.mkdirSync(join(dir, "tmp"), { recursive: true });
        fd = f.openSync(tmp, "wx");
      } catch (e) {
        throw storeError(e, dir);
      }
      const hash = sha256();
      let size = 0;
      let head: Uint8Array = new Uint8Array(0);
      let closed = false;
      try {
        const chunks = body instanceof Uint8Array ? [body] : body;
        for await (const chunk of chunks) {
          size += chunk.byteLength;
          if (size > maxBytes) {
            throw new CardsError("payload_too_large", `artifact over ${maxBytes} bytes`, { hint: "see docs/limits.md" });
          }
          if (head.byteLength < HEAD_BYTES) head = concat(head, chunk.subarray(0, HEAD_BYTES - head.byteLength));
          hash.update(chunk);
          for (let off = 0; off < chunk.byteLength;) off += f.writeSync(fd, chunk, off);
        }
        f.closeSync(fd);
        closed = true;
        const digest = hash.hex();
        const final = pathOf(digest);
        let mime: string;
        let spare: string | undefined;
        // the temp file stays as a spare until the card write is done (hold), so a
        // collection of unreferenced blobs (artifacts gc) meanwhile cannot lose the bytes
        spare = tmp;
        if (f.existsSync(final)) {
          // stored again: a collection leaves it alone from now on
          try { const now = new Date(); f.utimesSync(final, now, now); } catch { /* a read-only store: nothing to collect there either */ }
          mime = readMime(final) ?? mimeOf(head);
          if (readMime(final) === undefined) f.writeFileSync(`${final}.type`, mime); // lost by a gc cut short
        } else {
          mime = mimeOf(head);
          f.mkdirSync(join(dir, "sha256", digest.slice(0, 2)), { recursive: true });
          f.writeFileSync(`${final}.type`, mime);
          f.renameSync(tmp, final);
          // a second name for the same bytes costs no space; without hard links, no spare
          try { f.linkSync(final, tmp); } catch { spare = undefined; }
        }
        const hold: BlobHold = {
          ensure() {
            if (!spare || f.existsSync(final)) return;
            try {
              f.mkdirSync(join(dir, "sha256", digest.slice(0, 2)), { recursive: true });
              if (!f.existsSync(`${final}.type`)) f.writeFileSync(`${final}.type`, mime);
              f.renameSync(spare, final);
              spare = undefined;
            } catch (e) {
              throw storeError(e, dir);
            }
          },
          release() {
            if (spare) try { f.unlinkSync(spare); } catch { /* already gone */ }
            spare = undefined;
          },
        };
        return { sha256: digest, size, head, mime, hold };
      } catch (e) {
        if (!closed) try { f.closeSync(fd); } catch { /* already closed */ }
        try { f.unlinkSync(tmp); } catch { /* already gone */ }
        throw storeError(e, dir);
      }
    },
    async get(digest) {
      if (!DIGEST.test(digest)) return null;
      const p = pathOf(digest);
      let size: number;
      try {
        size = fs().statSync(p).size;
      } catch {
        return null;
      }
      // NOTE: node:stream loads only when a blob is read (it costs every CLI call otherwise)
      const { Readable } = await import("node:stream");
      return { body: Readable.toWeb(fs().createReadStream(p)) as unknown as ReadableStream<Uint8Array>, size, mime: readMime(p) ?? "application/octet-stream" };
    },
    has(digest) {
      return DIGEST.test(digest) && fs().existsSync(pathOf(digest));
    },
    async *list() {
      const f = fs();
      let folders: string[];
      try {
        folders = f.readdirSync(join(dir, "sha256"));
      } catch {
        return; // nothing stored yet
      }
      for (const folder of folders) {
        if (!/^[0-9a-f]{2}$/.test(folder)) continue;
        let names: string[];
        try { names = f.readdirSync(join(dir, "sha256", folder)); } catch { continue; }
        for (const name of names) {
          if (!DIGEST.test(name) || !name.startsWith(folder)) continue;
          let st: import("node:fs").Stats | undefined;
          try { st = f.statSync(join(dir, "sha256", folder, name), { throwIfNoEntry: false }); } catch (e) { throw storeError(e, dir); }
          if (st?.isFile()) yield { sha256: name, size: st.size, storedAt: st.mtimeMs };
        }
      }
    },
    remove(digest, storedBefore) {
      if (!DIGEST.test(digest)) return false;
      const f = fs();
      const p = pathOf(digest);
      try {
        const st = f.statSync(p, { throwIfNoEntry: false });
        if (!st || st.mtimeMs >= storedBefore) return false;
        // the type first: an upload that finds the bytes gone writes both anew
        f.rmSync(`${p}.type`, { force: true });
        f.unlinkSync(p);
        return true;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
        throw storeError(e, dir);
      }
    },
  };
}

let swept = false;

/**
 * Removes the temp files of uploads whose process is gone (a server or CLI killed mid-
 * upload: up to the artifact limit each, and `rsync` of the store would copy them). Runs
 * at a process's first upload; a temp file is named `<pid>-<time>-<random>`.
 */
function sweepTemp(tmpDir: string): void {
  swept = true;
  let names: string[];
  try {
    names = fs().readdirSync(tmpDir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || isAlive(pid)) continue;
    try { fs().unlinkSync(join(tmpDir, name)); } catch { /* removed meanwhile, or not ours to remove */ }
  }
}


/** A failure of the disk as `unavailable` (the caller's retry may work); anything else as is. */
function storeError(e: unknown, dir: string): unknown {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === "ENOSPC" || code === "EDQUOT") return new CardsError("unavailable", `the disk is full; the artifact was not stored in ${dir}`, { hint: "free disk space and retry" });
  if (code === "EIO" || code === "EROFS" || code === "EACCES" || code === "EPERM") return new CardsError("unavailable", `cannot write the artifact to ${dir} (${code})`, { hint: "check the workspace's .cards directory and its disk" });
  return e;
}

function readMime(blobPath: string): string | undefined {
  try {
    return fs().readFileSync(`${blobPath}.type`, "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}
