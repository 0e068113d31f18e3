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
 * 5% by default), which an unprivileged writer may not, nor root in a user namespace
 * (a rootless container), whose uid 0 is another user on the host.
 */
export async function freeBytes(dir: string): Promise<number | undefined> {
  try {
    const { readFileSync, statfsSync } = await import("node:fs"); // off the cold path: only a health check after a full disk asks
    const s = statfsSync(dir);
    let hostRoot = process.geteuid?.() === 0;
    if (hostRoot) {
      try {
        hostRoot = hostUid(readFileSync("/proc/self/uid_map", "utf8"), 0) === 0;
      } catch { /* no /proc: no user namespaces to tell apart */ }
    }
    return Number(hostRoot ? s.bfree : s.bavail) * Number(s.bsize);
  } catch {
    return undefined;
  }
}

/**
 * The uid `uid` of this user namespace is on the host, by its uid_map (lines of
 * `inside outside count`), or undefined when the map leaves it out.
 */
export function hostUid(uidMap: string, uid: number): number | undefined {
  for (const line of uidMap.split("\n")) {
    const [inside, outside, count] = line.trim().split(/\s+/).map(Number);
    if (inside === undefined || outside === undefined || count === undefined || [inside, outside, count].some(Number.isNaN)) continue;
    if (uid >= inside && uid < inside + count) return outside + (uid - inside);
  }
  return undefined;
}
