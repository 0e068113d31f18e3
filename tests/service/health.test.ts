/**
 * GET /health's answer (Store.health) where the disk or its mount refuses writes: a
 * read-only mount is told before any write fails, and a failure that is over is found out
 * by a small write of health's own, also on a server no one writes to. Mounts need root
 * (CI runs as root); elsewhere these tests are skipped.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCard, health } from "../../src/service/index.ts";
import { monotonicSkew } from "../helpers/clock.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";
import { canMount, mount, mounts, unmountAll } from "../helpers/mounts.ts";

afterAll(unmountAll);
const as = (actor: string) => ({ actor });
const unavailable = (svc: Parameters<typeof health>[0]) => health(svc, "t").then(() => undefined, (e) => e as { code: string; message: string; extra: { hint?: string } });

/** mkfs.ext4 and a loop device, for a disk whose blocks are partly reserved for root. */
const canExt4 = canMount && spawnSync("sh", ["-c", "command -v mkfs.ext4"]).status === 0;

/** Runs `code` in Bun as uid 0 of a user namespace of its own, which is uid 100000 on the host (a rootless container). */
const asRootlessRoot = (code: string) =>
  spawnSync("setpriv", ["--reuid=100000", "--regid=100000", "--clear-groups", "unshare", "--user", "--map-root-user", process.execPath, "-e", code], { encoding: "utf8" });

/** root here, with an ext4 image to mount, and setpriv and unshare to start such a process */
const canRootlessRoot = canExt4 && process.geteuid?.() === 0 && asRootlessRoot("process.exit(process.geteuid() === 0 ? 0 : 1)").status === 0;

/**
 * A serving workspace on a 3 MiB tmpfs (or a 16 MiB ext4 with a fifth of its blocks
 * reserved for root), with the monotonic clock moved on by `clock.skew` ms.
 */
async function smallDisk(fs: "tmpfs" | "ext4" = "tmpfs") {
  const dir = mkdtempSync(join(tmpdir(), `cards-${fs}-`));
  if (fs === "tmpfs") expect(mount("-t", "tmpfs", "-o", "size=3m", "tmpfs", dir)).toBe(true);
  else {
    expect(spawnSync("sh", ["-c", `truncate -s 16M ${dir}.img && mkfs.ext4 -q -m 20 ${dir}.img`]).status).toBe(0);
    expect(mount("-o", "loop", `${dir}.img`, dir)).toBe(true);
  }
  mounts.push(dir);
  cpSync(join(makeWorkspace(), "definitions"), join(dir, "definitions"), { recursive: true });
  const svc = await openTestService(dir, "serve");
  const clock = monotonicSkew();
  return { dir, svc, clock };
}

/** Runs `fn` on a smallDisk, then puts the clock back and closes the workspace, whatever happens. */
async function onSmallDisk(fn: (disk: Awaited<ReturnType<typeof smallDisk>>) => Promise<void>, fs: "tmpfs" | "ext4" = "tmpfs"): Promise<void> {
  const disk = await smallDisk(fs);
  try {
    await fn(disk);
  } finally {
    disk.clock.restore();
    disk.svc.close();
  }
}

/** Fills the disk of `dir`, then creates cards until one is refused (true) or 200 went in. */
async function fillUntilRefused(dir: string, svc: Awaited<ReturnType<typeof openTestService>>): Promise<boolean> {
  spawnSync("sh", ["-c", `dd if=/dev/zero of=${join(dir, "filler")} bs=4k 2>/dev/null; sync`]);
  for (let i = 0; i < 200; i++) {
    if (await createCard(svc, { type_id: "task", title: `t${i} ${"x".repeat(150)}` }, as("ada")).then(() => false, () => true)) return true;
  }
  return false;
}

describe("GET /health", () => {
  test("the .cards folder replaced by a file under the server: 503 and writes unavailable, naming why (before: a raw ENOTDIR, 500 on both)", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "serve");
    const cards = join(dir, ".cards");
    try {
      renameSync(cards, `${cards}.moved`);
      writeFileSync(cards, "");
      const err = await unavailable(svc);
      expect(err?.code).toBe("unavailable");
      expect(err?.message).toBe(`${join(cards, "cards.db")} cannot be reached now (ENOTDIR) while this process has it open; nothing was written`);
      const write = await createCard(svc, { type_id: "task", title: "x" }, as("ada")).then(() => null, (e) => e);
      expect([write?.code, write?.message]).toEqual(["unavailable", err?.message]);
      rmSync(cards);
      renameSync(`${cards}.moved`, cards);
      // put back: the refused write is remembered until one commits
      expect((await unavailable(svc))?.message).toStartWith("the last write, 0 s ago, failed: ");
      await createCard(svc, { type_id: "task", title: "back" }, as("ada"));
      expect(await unavailable(svc)).toBeUndefined();
    } finally {
      svc.close();
    }
  });


  test.skipIf(!canMount)("a server opened on a read-only mount is 503 before any write fails (before: 200 until a write tried)", async () => {
    const dir = makeWorkspace();
    (await openTestService(dir, "serve")).close(); // the database made while writable
    const cards = join(dir, ".cards");
    expect(mount("--bind", cards, cards)).toBe(true);
    mounts.push(cards);
    expect(mount("-o", "remount,bind,ro", cards)).toBe(true);
    const svc = await openTestService(dir, "serve");
    try {
      const err = await unavailable(svc);
      expect(err?.code).toBe("unavailable");
      expect(err?.message).toBe(`${join(cards, "cards.db")} was opened read-only (its disk or its file could not be written when this process opened it); every write will fail`);
      // a server needs a restart once the disk is writable again; a one-shot call does not
      expect(err?.extra.hint).toBe("make the workspace's .cards directory and its files writable (remount the disk read-write, fix their permissions); a `cards serve` or `cards mcp` that opened it then needs a restart (a one-shot call does not)");
      expect(await createCard(svc, { type_id: "task", title: "x" }, as("ada")).then(() => null, (e) => e.code)).toBe("unavailable");
    } finally {
      svc.close();
    }
    // a writable one answers 200, also while another process holds the write lock (not waited for)
    expect(mount("-o", "remount,bind,rw", cards)).toBe(true);
    const again = await openTestService(dir, "serve");
    const other = new Database(join(cards, "cards.db"));
    try {
      other.exec("BEGIN IMMEDIATE");
      const t0 = performance.now();
      expect(await unavailable(again)).toBeUndefined();
      expect(performance.now() - t0).toBeLessThan(1000);
    } finally {
      other.exec("ROLLBACK");
      other.close();
      again.close();
    }
  });

  test.skipIf(!canMount)("a one-shot call (embedded, no dedicated writer) on a read-only mount is told the same, without waiting on a lock held elsewhere", async () => {
    const dir = makeWorkspace();
    (await openTestService(dir, "embedded")).close();
    const cards = join(dir, ".cards");
    expect(mount("--bind", cards, cards)).toBe(true);
    mounts.push(cards);
    expect(mount("-o", "remount,bind,ro", cards)).toBe(true);
    const svc = await openTestService(dir, "embedded");
    try {
      const err = await unavailable(svc);
      expect([err?.code, err?.message]).toEqual(["unavailable", `${join(cards, "cards.db")} was opened read-only (its disk or its file could not be written when this process opened it); every write will fail`]);
    } finally {
      svc.close();
    }
    expect(mount("-o", "remount,bind,rw", cards)).toBe(true);
    const again = await openTestService(dir, "embedded");
    const other = new Database(join(cards, "cards.db"));
    try {
      other.exec("BEGIN IMMEDIATE");
      expect(await unavailable(again)).toBeUndefined();
      other.exec("ROLLBACK");
      // the lock's own wait is back in place for the writes after it
      await createCard(again, { type_id: "task", title: "after" }, as("ada"));
    } finally {
      if (other.inTransaction) other.exec("ROLLBACK");
      other.close();
      again.close();
    }
  });

  test.skipIf(!canMount)("a full disk that was freed is found out by health's own small write once the failure is 10 s old, on a server no one writes to (before: 200 after a minute, whatever the disk)", async () => {
    await onSmallDisk(async ({ dir, svc, clock }) => {
      await createCard(svc, { type_id: "task", title: "before" }, as("ada"));
      expect(await fillUntilRefused(dir, svc)).toBe(true);
      expect((await unavailable(svc))?.message).toMatch(/^the disk holding .* has \d+ KiB free, less than the 1 MiB GET \/health asks for after a full disk; the last write, 0 s ago, failed: the disk is full/);
      // still full 11 s on: no room for a write, and the answer stands, saying what is free now
      clock.skew = 11_000;
      const still = await unavailable(svc);
      expect(still?.message).toMatch(/^the disk holding .* has \d+ KiB free, less than the 1 MiB GET \/health asks for after a full disk; the last write, 11 s ago, failed: the disk is full/);
      expect(still?.extra.hint).toContain("GET /health tries one of its own when the failure is 10 s old");
      // freed; within 10 s of the last probe no write is tried: the answer stands
      rmSync(join(dir, "filler"));
      clock.skew = 15_000;
      expect((await unavailable(svc))?.code).toBe("unavailable");
      // 10 s after it, health's own write commits: 200, with no other write meanwhile
      clock.skew = 22_000;
      expect(await unavailable(svc)).toBeUndefined();
      expect((await createCard(svc, { type_id: "task", title: "after" }, as("ada"))).title).toBe("after");
    });
  }, 60_000);

  test.skipIf(!canMount)("a disk with only a few KiB freed stays 503: health's one-row write would fit where a card does not (before: 200 while every create failed)", async () => {
    await onSmallDisk(async ({ dir, svc, clock }) => {
      await createCard(svc, { type_id: "task", title: "before" }, as("ada"));
      writeFileSync(join(dir, "pad"), Buffer.alloc(32 * 1024));
      expect(await fillUntilRefused(dir, svc)).toBe(true);
      rmSync(join(dir, "pad")); // 32 KiB: room for a meta row, not for what a card needs
      clock.skew = 11_000;
      // what statfs tells this process it may write there (root: the blocks kept for root
      // too), read before and after: the server's own threads may take some meanwhile
      const freeKiB = (): number => {
        const [avail, free, size] = spawnSync("stat", ["-f", "-c", "%a %f %S", dir]).stdout.toString().trim().split(" ").map(Number) as [number, number, number];
        return Math.floor(((process.geteuid?.() === 0 ? free : avail) * size) / 1024);
      };
      const before = freeKiB();
      const still = await unavailable(svc);
      const after = freeKiB();
      expect(still?.message).toMatch(/^the disk holding .* has \d+ KiB free, less than the 1 MiB GET \/health asks for after a full disk; the last write, 11 s ago, failed: the disk is full; nothing was written to /);
      const shown = Number(/has (\d+) KiB free/.exec(still!.message)?.[1]);
      // (the search index's thread, behind on the cards the full disk refused, may take the
      // freed KiB back at once: what is left is anywhere from 0 to the pad's 32)
      expect(before).toBeLessThan(1024);
      expect(shown).toBeLessThanOrEqual(before);
      expect(shown).toBeGreaterThanOrEqual(after);
      // asked again before the next probe is due: it still says what is free (before: only when it probed)
      clock.skew = 12_000;
      expect((await unavailable(svc))?.message).toMatch(/^the disk holding .* has \d+ KiB free, less than the 1 MiB /);
      // the whole disk freed: the next probe writes, and health turns 200
      rmSync(join(dir, "filler"));
      clock.skew = 22_000;
      expect(await unavailable(svc)).toBeUndefined();
    });
  }, 60_000);

  test("root counts the blocks reserved for root only when it is root on the host: uid 0 of a user namespace (a rootless container) is another user there", async () => {
    const { hostUid } = await import("../../src/platform/files.ts");
    expect(hostUid("         0          0 4294967295\n", 0)).toBe(0);
    expect(hostUid("         0     100000      65536\n", 0)).toBe(100000);
    expect(hostUid("      1000       1000          1\n         0     100000       1000\n", 0)).toBe(100000);
    expect(hostUid("      1000       1000          1\n", 0)).toBeUndefined();
    // another uid of a range is offset within it; the range ends before inside + count
    expect(hostUid("         0     100000      65536\n", 5)).toBe(100005);
    expect(hostUid("         0     100000      65536\n", 65536)).toBeUndefined();
  });

  test.skipIf(!canRootlessRoot)("a process that is root only in its user namespace (uid 100000 on the host) counts what any user may write, not the blocks kept for root", async () => {
    // under /tmp itself: the test run's TMPDIR is private (0700), and uid 100000 could not reach it
    const dir = mkdtempSync("/tmp/cards-userns-");
    expect(spawnSync("sh", ["-c", `truncate -s 16M ${dir}.img && mkfs.ext4 -q -m 20 ${dir}.img`]).status).toBe(0);
    expect(mount("-o", "loop", `${dir}.img`, dir)).toBe(true);
    mounts.push(dir);
    // the module where that process may read it
    copyFileSync(join(import.meta.dir, "../../src/platform/files.ts"), join(dir, "files.ts"));
    const r = asRootlessRoot(`const { freeBytes } = await import(${JSON.stringify(join(dir, "files.ts"))}); console.log(JSON.stringify([process.geteuid(), await freeBytes(${JSON.stringify(dir)})]))`);
    const [avail, free, size] = spawnSync("stat", ["-f", "-c", "%a %f %S", dir]).stdout.toString().trim().split(" ").map(Number) as [number, number, number];
    expect(avail).toBeLessThan(free);
    expect([r.stderr, JSON.parse(r.stdout)]).toEqual(["", [0, avail * size]]);
  });

  test.skipIf(!canExt4 || process.geteuid?.() !== 0)("a server running as root counts the blocks reserved for root as free (before: 503 saying \"0 KiB free\" while creates went in)", async () => {
    await onSmallDisk(async ({ dir, svc, clock }) => {
      expect(await fillUntilRefused(dir, svc)).toBe(true);
      // 2 MiB freed: all of it inside the ~3 MiB kept for root, which this process may use
      expect(spawnSync("truncate", ["-s", "-2M", join(dir, "filler")]).status).toBe(0);
      clock.skew = 11_000;
      expect(await unavailable(svc)).toBeUndefined();
      expect((await createCard(svc, { type_id: "task", title: "after" }, as("ada"))).title).toBe("after");
    }, "ext4");
  }, 60_000);

  test.skipIf(!canMount)("a failure other than a full disk is probed whatever is free: an I/O error on a disk with less than 1 MiB left turns 200 once health's own write commits", async () => {
    await onSmallDisk(async ({ dir, svc, clock }) => {
      await createCard(svc, { type_id: "task", title: "before" }, as("ada"));
      writeFileSync(join(dir, "pad"), Buffer.alloc(256 * 1024));
      spawnSync("sh", ["-c", `dd if=/dev/zero of=${join(dir, "filler")} bs=4k 2>/dev/null; sync`]);
      rmSync(join(dir, "pad")); // 256 KiB free: room for a write, less than the headroom a full disk asks for
      const err = await svc.store.write(() => { throw Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR" }); }).then(() => null, (e) => e);
      expect(err?.message).toStartWith("an I/O error stopped the write");
      expect((await unavailable(svc))?.message).toStartWith("the last write, 0 s ago, failed: an I/O error stopped the write");
      clock.skew = 11_000;
      expect(await unavailable(svc)).toBeUndefined();
      expect(svc.store.readMeta("health_probe")).toBeString();
    });
  }, 60_000);
});
