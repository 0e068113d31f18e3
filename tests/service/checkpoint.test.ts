/**
 * A server's writer checkpoints the WAL itself in small steps (SERVER_CHECKPOINT_PAGES):
 * the rows reach the main database file as writes go on, the WAL stays small and is
 * reused, reads on the other connection meanwhile included, and a shutdown leaves it empty.
 */
import { describe, expect, setSystemTime, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCard, getCard, listCards } from "../../src/service/index.ts";
import { SERVER_CHECKPOINT_PAGES, ServerCheckpoints, WAL_BACKLOG_FRAMES, walBacklog } from "../../src/store/sqlite/server-checkpoints.ts";
import type { SqliteDb } from "../../src/platform/sqlite.ts";
import { openDatabase } from "../../src/store/sqlite/connection.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const ada = { actor: "ada" } as never;
/** a WAL frame: a 24-byte header and a 4 KiB page */
const FRAME = 24 + 4096;

/** Cards in the main database file alone: a copy of it without its WAL (retried when the copy caught a checkpoint mid-write). */
function cardsInMainFile(dir: string): number {
  for (let attempt = 0; ; attempt++) {
    const copy = join(mkdtempSync(join(tmpdir(), "cards-ckpt-")), "main.db");
    copyFileSync(join(dir, ".cards", "cards.db"), copy);
    const db = new Database(copy, { readonly: true });
    try {
      return Number((db.query("SELECT count(*) AS n FROM cards").get() as { n: number }).n);
    } catch (e) {
      if (attempt >= 20) throw e;
      Bun.sleepSync(5);
    } finally {
      db.close();
    }
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
      // the backlog is copied while writes go on
      const deadline = Date.now() + 10_000;
      while (cardsInMainFile(dir) <= pinned + 700 && Date.now() < deadline) {
        await batch("meanwhile");
        await Bun.sleep(5);
      }
      expect(cardsInMainFile(dir)).toBeGreaterThan(pinned + 700);
      // then the WAL starts over: from then on its file stops growing
      for (let i = 0; i < 100; i++) await batch(`after ${i}`);
      const settled = statSync(wal).size;
      expect(walBacklog(join(dir, ".cards", "cards.db")).frames).toBeLessThanOrEqual(SERVER_CHECKPOINT_PAGES + 100);
      for (let i = 0; i < 200; i++) await batch(`later ${i}`);
      expect(statSync(wal).size).toBe(settled);
    } finally {
      other.close();
      svc.close();
    }
  });

  test("the backlog read from the wal-index is what SQLite reports, and a long WAL already copied is none", () => {
    const { path, writer, write } = scratch();
    const reader = new Database(path, { readonly: true });
    try {
      writer.exec("PRAGMA wal_autocheckpoint = 0");
      reader.exec("BEGIN");
      reader.query("SELECT count(*) FROM filler").get();
      for (let i = 0; i < 600; i++) write();
      // the reader holds every frame back: a PASSIVE pass copies none and reports them all
      const r = writer.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { log: number; checkpointed: number };
      expect(r.log).toBeGreaterThan(WAL_BACKLOG_FRAMES);
      expect(walBacklog(path).frames).toBe(r.log - r.checkpointed);
      reader.exec("COMMIT");
      // copied: the WAL file is as long as before, and no backlog is left
      const all = writer.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { log: number; checkpointed: number };
      expect(all.checkpointed).toBe(all.log);
      expect(statSync(`${path}-wal`).size).toBeGreaterThan(WAL_BACKLOG_FRAMES * FRAME);
      expect(walBacklog(path)).toEqual({ frames: 0, copied: all.log });
      const checkpoints = new ServerCheckpoints(writer, path);
      write(checkpoints);
      expect(checkpoints.stats()).toEqual({ catchingUp: false, passes: 0, frames: 0 });
      checkpoints.stop();
    } finally {
      reader.close();
      writer.close();
    }
  });

  test("a backlog goes to the thread, which hands back little even while writes go on back to back", () => {
    const { path, writer, write } = scratch();
    const checkpoints = new ServerCheckpoints(writer, path);
    const autocheckpoint = () => Number((writer.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint);
    const reader = new Database(path, { readonly: true });
    try {
      expect(autocheckpoint()).toBe(SERVER_CHECKPOINT_PAGES);
      reader.exec("BEGIN");
      reader.query("SELECT count(*) FROM filler").get();
      // none of these frames can be copied while the reader reads
      for (let i = 0; i < 3_000 && !checkpoints.stats().catchingUp; i++) write(checkpoints);
      for (let i = 0; i < 2_000; i++) write(checkpoints);
      expect(checkpoints.stats().catchingUp).toBe(true);
      expect(autocheckpoint()).toBe(0);
      const backlog = walBacklog(path).frames;
      expect(backlog).toBeGreaterThan(5 * WAL_BACKLOG_FRAMES);
      reader.exec("COMMIT");
      // writes go on back to back (the thread runs beside this loop, which never yields)
      let handedBack = -1;
      const deadline = Date.now() + 20_000;
      while (checkpoints.stats().catchingUp && Date.now() < deadline) {
        write(checkpoints);
        if (!checkpoints.stats().catchingUp) handedBack = walBacklog(path).frames;
      }
      // the thread copied the backlog (and what came meanwhile); the writer's own checkpoints
      // are back on, with little left for them
      expect(checkpoints.stats().catchingUp).toBe(false);
      expect(checkpoints.stats().frames).toBeGreaterThan(backlog);
      expect(autocheckpoint()).toBe(SERVER_CHECKPOINT_PAGES);
      expect(handedBack).toBeGreaterThanOrEqual(0);
      expect(handedBack).toBeLessThan(2 * SERVER_CHECKPOINT_PAGES);
    } finally {
      reader.close();
      checkpoints.stop();
      writer.close();
    }
  });

  test("a wall clock stepped back after a catch-up does not keep the next backlog from the thread (the quiet second is time that passed)", () => {
    const { path, writer, write } = scratch();
    const checkpoints = new ServerCheckpoints(writer, path);
    const reader = new Database(path, { readonly: true });
    const backlogBehindReader = () => {
      reader.exec("BEGIN");
      reader.query("SELECT count(*) FROM filler").get();
      for (let i = 0; i < 3_000 && !checkpoints.stats().catchingUp; i++) write(checkpoints);
      reader.exec("COMMIT");
    };
    try {
      backlogBehindReader();
      expect(checkpoints.stats().catchingUp).toBe(true);
      const deadline = performance.now() + 20_000;
      while (checkpoints.stats().catchingUp && performance.now() < deadline) write(checkpoints);
      expect(checkpoints.stats().catchingUp).toBe(false); // handed back: quiet for a second
      setSystemTime(new Date(Date.now() - 3_600_000)); // NTP steps the clock an hour back
      Bun.sleepSync(1_100);
      backlogBehindReader();
      expect(checkpoints.stats().catchingUp).toBe(true);
    } finally {
      setSystemTime();
      if (reader.inTransaction) reader.exec("COMMIT");
      reader.close();
      checkpoints.stop();
      writer.close();
    }
  });

  test("a thread that is gone mid catch-up gives the copying back to the writer", () => {
    const { path, writer, write } = scratch();
    const checkpoints = new ServerCheckpoints(writer, path);
    const reader = new Database(path, { readonly: true });
    try {
      reader.exec("BEGIN");
      reader.query("SELECT count(*) FROM filler").get();
      for (let i = 0; i < 3_000 && !checkpoints.stats().catchingUp; i++) write(checkpoints);
      expect(checkpoints.stats().catchingUp).toBe(true);
      (checkpoints as unknown as { helper: { stop(): void } }).helper.stop();
      write(checkpoints);
      expect(checkpoints.stats().catchingUp).toBe(false);
      expect(Number((writer.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint)).toBe(SERVER_CHECKPOINT_PAGES);
    } finally {
      reader.close();
      checkpoints.stop();
      writer.close();
    }
  });
});

/** A scratch database with the workspace schema and a table of 16 KB rows (4+ WAL frames a write). */
function scratch(): { path: string; writer: SqliteDb; write: (c?: ServerCheckpoints) => void } {
  const path = join(mkdtempSync(join(tmpdir(), "cards-backlog-")), "cards.db");
  const writer = openDatabase(path);
  writer.exec("CREATE TABLE filler (x BLOB)");
  const write = (c?: ServerCheckpoints) => {
    c?.beforeBegin();
    writer.exec("BEGIN IMMEDIATE");
    writer.query("INSERT INTO filler (x) VALUES (randomblob(16000))").run();
    writer.exec("COMMIT");
  };
  return { path, writer, write };
}
