/**
 * A server's writer checkpoints the WAL itself in small steps (SERVER_CHECKPOINT_PAGES):
 * the rows reach the main database file as writes go on, the WAL stays small and is
 * reused, reads on the other connection meanwhile included, and a shutdown leaves it empty.
 */
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCard, getCard, listCards } from "../../src/service/index.ts";
import { SERVER_CHECKPOINT_PAGES } from "../../src/store/sqlite/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const ada = { actor: "ada" } as never;
/** a WAL frame: a 24-byte header and a 4 KiB page */
const FRAME = 24 + 4096;

/** Cards in the main database file alone: a copy of it without its WAL. */
function cardsInMainFile(dir: string): number {
  const copy = join(mkdtempSync(join(tmpdir(), "cards-ckpt-")), "main.db");
  copyFileSync(join(dir, ".cards", "cards.db"), copy);
  const db = new Database(copy, { readonly: true });
  try {
    return Number((db.query("SELECT count(*) AS n FROM cards").get() as { n: number }).n);
  } finally {
    db.close();
  }
}

describe("a server's checkpoints", () => {
  test("writes reach the main database file as they go, and the WAL stays small while reads run beside them", async () => {
    const dir = makeWorkspace();
    const wal = join(dir, ".cards", "cards.db-wal");
    const svc = await openTestService(dir, "serve");
    let largest = 0;
    try {
      for (let i = 0; i < 600; i++) {
        // a batch of concurrent creates shares a transaction; reads in between use the other connection
        const made = await Promise.all(Array.from({ length: 4 }, (_, k) => createCard(svc, { type_id: "task", title: `card ${i}.${k}` }, ada)));
        largest = Math.max(largest, statSync(wal).size);
        if (i % 10 === 0) {
          await listCards(svc, { limit: 50 } as never, "ada");
          getCard(svc, made[3]!.id);
        }
      }
      // 2,400 cards wrote tens of MiB of WAL frames; the WAL never held much more than a
      // checkpoint's worth (a little more when the search indexer thread was reading just
      // then). SQLite's default, 1,000 pages, lets it pass 1,000 pages before each copy.
      expect(largest).toBeGreaterThan(SERVER_CHECKPOINT_PAGES * FRAME);
      expect(largest).toBeLessThan(1_000 * FRAME);
      // everything but the last few hundred pages is already in the main file
      expect(cardsInMainFile(dir)).toBeGreaterThan(2_000);
    } finally {
      svc.close();
    }
    // a shutdown checkpoints the rest and leaves the WAL empty
    expect(statSync(wal).size).toBe(0);
    expect(cardsInMainFile(dir)).toBe(2_400);
  });

  test("a reader in another process holds the WAL back only while it reads: afterwards the WAL starts over", async () => {
    const dir = makeWorkspace();
    const wal = join(dir, ".cards", "cards.db-wal");
    const svc = await openTestService(dir, "serve");
    const other = new Database(join(dir, ".cards", "cards.db"), { readonly: true });
    const batch = (tag: string) => Promise.all(Array.from({ length: 4 }, (_, k) => createCard(svc, { type_id: "task", title: `${tag} ${k}` }, ada)));
    try {
      for (let i = 0; i < 60; i++) await batch(`before ${i}`); // past a first checkpoint
      other.exec("BEGIN");
      const pinned = Number((other.query("SELECT count(*) AS n FROM cards").get() as { n: number }).n);
      for (let i = 0; i < 200; i++) await batch(`pinned ${i}`);
      // nothing written after its snapshot can go into the main file while it reads
      const grown = statSync(wal).size;
      expect(grown).toBeGreaterThan(2 * SERVER_CHECKPOINT_PAGES * FRAME);
      expect(cardsInMainFile(dir)).toBeLessThanOrEqual(pinned);
      other.exec("COMMIT");
      // the next checkpoint copies the backlog; the write after it starts the WAL over:
      // from then on the file stops growing
      for (let i = 0; i < 5; i++) await batch(`after ${i}`);
      expect(cardsInMainFile(dir)).toBeGreaterThan(pinned + 700);
      const settled = statSync(wal).size;
      for (let i = 0; i < 200; i++) await batch(`later ${i}`);
      expect(statSync(wal).size).toBe(settled);
    } finally {
      other.close();
      svc.close();
    }
  });
});
