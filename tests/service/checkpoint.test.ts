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
