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
    try {
      let last = "";
      for (let i = 0; i < 600; i++) {
        // a batch of concurrent creates shares a transaction; reads in between use the other connection
        const made = await Promise.all(Array.from({ length: 4 }, (_, k) => createCard(svc, { type_id: "task", title: `card ${i}.${k}` }, ada)));
        last = made[3]!.id;
        if (i % 10 === 0) {
          await listCards(svc, { limit: 50 } as never, "ada");
          getCard(svc, last);
        }
      }
      // 2,400 cards wrote tens of MiB of WAL frames; without checkpoints the WAL would hold them all
      expect(statSync(wal).size).toBeLessThan(4 * SERVER_CHECKPOINT_PAGES * FRAME);
      // everything but the last few hundred pages is already in the main file
      expect(cardsInMainFile(dir)).toBeGreaterThan(2_000);
    } finally {
      svc.close();
    }
    // a shutdown checkpoints the rest and leaves the WAL empty
    expect(statSync(wal).size).toBe(0);
    expect(cardsInMainFile(dir)).toBe(2_400);
  });
});
