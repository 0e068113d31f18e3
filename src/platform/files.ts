/**
 * File facts for the CLI's cold path through Bun.file, synchronously: importing node:fs
 * costs about 1.3 ms per process and the first async stat about 1 ms, while nine
 * Bun.file stamps cost about 0.4 ms (docs/benchmarks.md, "CLI cold path").
 */

/** Bun.file reports this modification time for a path that does not exist. */
const ABSENT_MTIME = 2 ** 52 - 1;

/** `size:mtimeMs` of a file or folder, or undefined when nothing is there. */
export function fileStamp(path: string): string | undefined {
  const f = Bun.file(path);
  const mtime = f.lastModified;
  if (!(mtime < ABSENT_MTIME)) return undefined;
  return `${f.size}:${mtime}`;
}

/** True when something (a file, as far as callers care) exists at `path`. */
export function pathExists(path: string): boolean {
  return Bun.file(path).lastModified < ABSENT_MTIME;
}

/** The size of the file at `path` in bytes, or undefined when nothing is there. */
export function fileSize(path: string): number | undefined {
  const f = Bun.file(path);
  return f.lastModified < ABSENT_MTIME ? f.size : undefined;
}

/**
 * Bytes this process may still write on the disk holding `dir` (statfs), or undefined
 * when that cannot be told: root may also use the blocks a filesystem keeps for it (ext4:
 * 5% by default), which an unprivileged writer may not.
 */
export async function freeBytes(dir: string): Promise<number | undefined> {
  try {
    const { statfsSync } = await import("node:fs"); // off the cold path: only a health check after a full disk asks
    const s = statfsSync(dir);
    return Number(process.geteuid?.() === 0 ? s.bfree : s.bavail) * Number(s.bsize);
  } catch {
    return undefined;
  }
}
