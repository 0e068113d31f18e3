/**
 * Mounts for tests of disks that refuse writes (read-only binds, small tmpfs, ext4 images).
 * They need root (CI runs as root); elsewhere `canMount` is false and those tests skip.
 * A test file registers `afterAll(unmountAll)`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Mount points made by the tests of this file, unmounted by unmountAll. */
export const mounts: string[] = [];

/** Runs mount(8) with these arguments; true when it succeeded. */
export const mount = (...args: string[]): boolean => spawnSync("mount", args).status === 0;

export const canMount = (() => {
  const d = mkdtempSync(join(tmpdir(), "cards-probe-"));
  const ok = mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", d);
  if (ok) spawnSync("umount", [d]);
  return ok;
})();

/** Unmounts every mount point made (newest first), and removes it and the disk image beside one, if any. */
export function unmountAll(): void {
  for (const m of mounts.reverse()) {
    spawnSync("umount", ["-l", m]);
    rmSync(`${m}.img`, { force: true });
    try { rmdirSync(m); } catch { /* not empty, or gone */ }
  }
  mounts.length = 0;
}
