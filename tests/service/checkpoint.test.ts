/**
 * A server checkpoints the WAL on a background thread (writes never wait for a
 * checkpoint): the rows reach the main database file while the WAL keeps being reused.
 */
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCard } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const ada = { actor: "ada" } as never;

/** Cards in the main database file alone: a copy of it without its WAL. */
function cardsInMainFile(dir: string): number {
  const copy = join(mkdtempSync(join(tmpdir(), "cards-ckpt-")), "main.db");
  copyFileSync(join(dir, ".cards", "cards.db"), copy);
  try {
    const db = new Database(copy, { readonly: true });
    try {
      return Number((db.query("SELECT count(*) AS n FROM cards").get() as { n: number }).n);
    } finally {
      db.close();
    }
  } catch {
    return -1; // copied mid-checkpoint; the caller looks again
  }
}

async function waitForMainFile(dir: string, n: number): Promise<number> {
  const deadline = Date.now() + 3000;
  while (cardsInMainFile(dir) < n && Date.now() < deadline) await Bun.sleep(50);
  return cardsInMainFile(dir);
}

describe("background checkpoints", () => {
  test("a server's writes reach the main database file without a checkpoint on the request path, and the WAL is reused", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "serve");
    try {
      for (let i = 0; i < 300; i++) await createCard(svc, { type_id: "task", title: `card ${i}` }, ada);
      expect(await waitForMainFile(dir, 300)).toBe(300);
      // once quiet, the checkpointer rewinds the WAL: later writes reuse it instead of growing it
      await Bun.sleep(500);
      const wal = join(dir, ".cards", "cards.db-wal");
      const before = statSync(wal).size;
      for (let i = 0; i < 50; i++) await createCard(svc, { type_id: "task", title: `more ${i}` }, ada);
      expect(statSync(wal).size).toBe(before);
      expect(await waitForMainFile(dir, 350)).toBe(350);
    } finally {
      svc.close();
    }
  });
});

describe("the checkpointer under load that never lets go", () => {
  test("the WAL stays bounded while a writer and a reader are always busy", async () => {
    const { startCheckpointer } = await import("../../src/platform/sqlite.ts");
    const dir = mkdtempSync(join(tmpdir(), "cards-wal-bound-"));
    const path = join(dir, "t.db");
    const db = new Database(path, { create: true });
    db.exec("PRAGMA busy_timeout = 0; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0");
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
    const reader = new Database(path, { readonly: true });
    const ckpt = startCheckpointer(path, { intervalMs: 5, restartPages: 100 });
    const body = "x".repeat(3000);
    const insert = db.query("INSERT INTO t (body) VALUES (?)");
    const count = reader.query("SELECT count(*) AS n FROM t");
    let largest = 0;
    try {
      const end = Date.now() + 3500;
      while (Date.now() < end) {
        // a write transaction after another, and a read between each: no quiet moment
        for (;;) {
          try { db.exec("BEGIN IMMEDIATE"); break; } catch { await Bun.sleep(0); }
        }
        for (let i = 0; i < 20; i++) insert.run(body);
        db.exec("COMMIT");
        count.get();
        largest = Math.max(largest, statSync(`${path}-wal`).size);
      }
    } finally {
      ckpt.stop();
      reader.close();
      db.close();
    }
    // 100 pages is ~400 KB: rewound, the WAL stays within a few MB; never rewound, it passes
    // 10 MB in this time here
    expect(largest).toBeLessThan(5 * 1024 * 1024);
  }, 20_000);
});

describe("rewinding the WAL under a writer that never pauses on its own", () => {
  test("the writer holds still at a transaction boundary when asked, so the WAL is rewound and stays bounded", async () => {
    const { startCheckpointer } = await import("../../src/platform/sqlite.ts");
    const dir = mkdtempSync(join(tmpdir(), "cards-wal-pause-"));
    const path = join(dir, "t.db");
    const db = new Database(path, { create: true });
    db.exec("PRAGMA busy_timeout = 0; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0");
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
    const ckpt = startCheckpointer(path, { intervalMs: 5, restartPages: 100 });
    const body = "x".repeat(300);
    const insert = db.query("INSERT INTO t (body) VALUES (?)");
    let largest = 0;
    let rows = 0;
    try {
      const end = Date.now() + 3000;
      while (Date.now() < end) {
        // like the server's write lock: the only gap between two transactions is the pause
        const pause = ckpt.writerPause();
        if (pause) await pause;
        for (;;) {
          try { db.exec("BEGIN IMMEDIATE"); break; } catch { await Bun.sleep(0); } // as the write lock retries
        }
        for (let i = 0; i < 20; i++) insert.run(body);
        db.exec("COMMIT");
        rows += 20;
        largest = Math.max(largest, statSync(`${path}-wal`).size);
      }
      expect(ckpt.stats().rewinds).toBeGreaterThan(0);
    } finally {
      ckpt.stop();
      db.close();
    }
    const check = new Database(path, { readonly: true });
    try {
      expect(Number((check.query("SELECT count(*) AS n FROM t").get() as { n: number }).n)).toBe(rows);
    } finally {
      check.close();
    }
    // rewound every few dozen ms, the WAL stays near 35 MB here; without the pause the
    // RESTART never finds the writer between transactions and the WAL passes 500 MB
    expect(largest).toBeLessThan(120 * 1024 * 1024);
  }, 20_000);
});
