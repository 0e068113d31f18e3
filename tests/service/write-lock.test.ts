/**
 * Group commit when SQLite itself ends the transaction mid-batch: it rolls the whole
 * transaction back on an I/O error, a full disk or no memory. Then nothing of the batch
 * is written, so no write of it may be answered as done, and the ones after it must not
 * run outside a transaction.
 */
import { describe, expect, setSystemTime, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, WriteLock, WRITE_LOCK_DEADLINE_MS, writeError } from "../../src/store/sqlite/connection.ts";
import { openSqlite } from "../../src/platform/sqlite.ts";
import { CardsError, isCardsError } from "../../src/domain/errors.ts";
import { health } from "../../src/service/index.ts";
import { Database } from "bun:sqlite";
import { monotonicSkew } from "../helpers/clock.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

function freshDb() {
  const path = join(mkdtempSync(join(tmpdir(), "cards-lock-")), "t.db");
  const db = openDatabase(path);
  db.exec("CREATE TABLE t (v TEXT)");
  return { db, path, rows: () => db.query("SELECT v FROM t ORDER BY v").all().map((r) => r.v) };
}

describe("the write lock when SQLite rolls the transaction back", () => {
  test("every write of the batch is refused as unavailable, none is written, and the lock goes on", async () => {
    const { db, path, rows } = freshDb();
    const lock = new WriteLock(db, path, true);
    let ranAfter = false;
    // queued in one tick: one transaction, each in its own savepoint
    const results = await Promise.allSettled([
      lock.run(() => { db.query("INSERT INTO t VALUES ('first')").run(); return 1; }),
      lock.run(() => {
        db.query("INSERT INTO t VALUES ('second')").run();
        db.exec("ROLLBACK"); // what SQLite does on SQLITE_IOERR / SQLITE_FULL / SQLITE_NOMEM
        throw Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_WRITE" });
      }),
      lock.run(() => { ranAfter = true; db.query("INSERT INTO t VALUES ('third')").run(); return 3; }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    for (const r of results) {
      const reason = (r as PromiseRejectedResult).reason;
      expect(isCardsError(reason)).toBe(true);
      expect(reason.code).toBe("unavailable");
      expect(reason.message).toContain(path);
    }
    expect(ranAfter).toBe(false);
    expect(rows()).toEqual([]);
    expect(db.inTransaction()).toBe(false);
    // the next batch commits normally
    expect(await lock.run(() => { db.query("INSERT INTO t VALUES ('later')").run(); return "ok"; })).toBe("ok");
    expect(rows()).toEqual(["later"]);
    db.close();
  });

  test("a write that fails on its own is rolled back alone; the rest of the batch commits", async () => {
    const { db, path, rows } = freshDb();
    const lock = new WriteLock(db, path, true);
    const results = await Promise.allSettled([
      lock.run(() => { db.query("INSERT INTO t VALUES ('a')").run(); }),
      lock.run(() => { db.query("INSERT INTO t VALUES ('b')").run(); throw new Error("refused"); }),
      lock.run(() => { db.query("INSERT INTO t VALUES ('c')").run(); }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(rows()).toEqual(["a", "c"]);
    db.close();
  });
});

describe("a database file that is not in WAL mode", () => {
  test("opening switches it back to WAL (a `cards backup` copy put in place)", () => {
    const path = join(mkdtempSync(join(tmpdir(), "cards-lock-")), "t.db");
    openDatabase(path).close();
    const raw = openSqlite(path);
    raw.exec("PRAGMA journal_mode = DELETE");
    expect(raw.query("PRAGMA journal_mode").get()?.journal_mode).toBe("delete");
    raw.close();
    const db = openDatabase(path);
    expect(db.query("PRAGMA journal_mode").get()?.journal_mode).toBe("wal");
    db.close();
  });

  test("a COMMIT that meets a reader's lock (rollback journal) is retried, not answered as an error", async () => {
    const { db, reader, lock } = readerHoldsShared();
    reader.query("SELECT count(*) FROM t").get(); // a SHARED lock: COMMIT needs it gone
    setTimeout(() => reader.exec("COMMIT"), 80);
    const done = await lock.run(() => { db.query("INSERT INTO t VALUES ('x')").run(); return "ok"; });
    expect(done).toBe("ok");
    expect(db.query("SELECT v FROM t").all()).toEqual([{ v: "x" }]);
    db.close();
    reader.close();
  });
});

describe("write errors that name the file", () => {
  test("a damaged page met by a write is unavailable naming the file, not internal", () => {
    const err = writeError(Object.assign(new Error("database disk image is malformed"), { code: "SQLITE_CORRUPT" }), "/w/.cards/cards.db");
    expect(isCardsError(err)).toBe(true);
    expect(err).toMatchObject({ code: "unavailable", message: expect.stringContaining("/w/.cards/cards.db is damaged") });
  });
});

describe("the fault GET /health reports", () => {
  test("is the last write the disk or the file stopped, until one commits; a caller's own error is none", async () => {
    const { db, path } = freshDb();
    const lock = new WriteLock(db, path, true);
    await lock.run(() => { throw new Error("the caller's own refusal"); }).catch(() => {});
    expect(lock.fault).toBeUndefined();
    await lock.run(() => {
      db.exec("ROLLBACK");
      throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
    }).catch(() => {});
    expect(lock.fault?.error.code).toBe("unavailable");
    expect(lock.fault?.error.message).toContain("the disk is full");
    expect(performance.now() - lock.fault!.at).toBeLessThan(5_000);
    // a statement the disk stopped, rolled back to its savepoint alone
    await lock.run(() => { throw Object.assign(new Error("attempt to write a readonly database"), { code: "SQLITE_READONLY" }); }).catch(() => {});
    expect(lock.fault?.error.message).toContain("read-only");
    await lock.run(() => { db.query("INSERT INTO t VALUES ('ok')").run(); });
    expect(lock.fault).toBeUndefined();
    db.close();
  });

  test("a guard's refusal under the lock rolls the transaction back and is a fault; only a write that changes a row clears it", async () => {
    const { db, path, rows } = freshDb();
    let refuse = true;
    const lock = new WriteLock(db, path, true, { afterBegin: () => { if (refuse) throw new CardsError("unavailable", "replaced"); } });
    const err = await lock.run(() => { db.query("INSERT INTO t VALUES ('never')").run(); }).then(() => null, (e) => e);
    expect(err?.message).toBe("replaced");
    expect(lock.fault?.error.message).toBe("replaced");
    // rolled back: no transaction left open, the write lock free for another connection
    expect(db.inTransaction()).toBe(false);
    const other = openDatabase(path);
    other.exec("BEGIN IMMEDIATE");
    other.exec("ROLLBACK");
    other.close();
    refuse = false;
    // a write that commits but changes no row (a replayed key, a PATCH that changes nothing) says nothing of the disk
    expect(await lock.run(() => 1)).toBe(1);
    expect(lock.fault?.error.message).toBe("replaced");
    // nor one that changed rows and then failed on its own
    await lock.run(() => { db.query("INSERT INTO t VALUES ('undone')").run(); throw new Error("refused"); }).catch(() => {});
    expect(lock.fault?.error.message).toBe("replaced");
    await lock.run(() => { db.query("INSERT INTO t VALUES ('kept')").run(); });
    expect(lock.fault).toBeUndefined();
    expect(rows()).toEqual(["kept"]);
    db.close();
  });

  test("within one group commit, the last word counts: a refused write after a row written keeps the fault, a row written after a refusal clears it", async () => {
    const { db, path, rows } = freshDb();
    const lock = new WriteLock(db, path, true);
    const full = () => { throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }); };
    const write = (v: string) => () => { db.query("INSERT INTO t VALUES (?)").run(v); };
    // no fault yet: the refusal comes first, a write after it in the same batch commits
    await Promise.allSettled([lock.run(full), lock.run(write("a"))]);
    expect(rows()).toEqual(["a"]);
    expect(lock.fault).toBeUndefined();
    // a fault remembered: a row written, then a refusal in the same batch
    await lock.run(full).catch(() => {});
    await Promise.allSettled([lock.run(write("b")), lock.run(full)]);
    expect(rows()).toEqual(["a", "b"]);
    expect(lock.fault?.error.message).toContain("the disk is full");
    db.close();
  });

  test("a write that fails for its own reasons after a row written in the same batch is no fault: the batch's commit clears the one remembered", async () => {
    const { db, path, rows } = freshDb();
    const lock = new WriteLock(db, path, true);
    await lock.run(() => { throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }); }).catch(() => {});
    expect(lock.fault?.error.message).toContain("the disk is full");
    const write = (v: string) => () => { db.query("INSERT INTO t VALUES (?)").run(v); };
    for (const own of [new CardsError("validation_failed", "a title is required"), new TypeError("a bug of the caller's")]) {
      const results = await Promise.allSettled([lock.run(write(own.name)), lock.run(() => { throw own; })]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
      expect(lock.fault).toBeUndefined();
      await lock.run(() => { throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }); }).catch(() => {});
    }
    expect(rows()).toEqual(["CardsError", "TypeError"]);
    db.close();
  });

  test("a write the environment stopped in another way (a file SQLite could not open, no file descriptors) is a fault too", async () => {
    const { db, path } = freshDb();
    const lock = new WriteLock(db, path, true);
    for (const code of ["SQLITE_CANTOPEN", "EMFILE"]) {
      await lock.run(() => { db.query("INSERT INTO t VALUES ('x')").run(); }); // clears
      expect(lock.fault).toBeUndefined();
      const err = await lock.run(() => { throw Object.assign(new Error("unable to open database file"), { code }); }).then(() => null, (e) => e);
      expect([code, err?.code]).toEqual([code, "unavailable"]);
      expect(lock.fault?.error).toBe(err);
    }
    db.close();
  });

  test("a lock another process held past the deadline is none: it says nothing of the disk", async () => {
    const { db, path } = freshDb();
    const other = openDatabase(path);
    other.exec("BEGIN IMMEDIATE");
    try {
      const lock = new WriteLock(db, path, true);
      const err = await lock.run(() => 1).then(() => null, (e) => e);
      expect(err?.message).toContain("stayed locked by another writer");
      expect(lock.fault).toBeUndefined();
    } finally {
      other.exec("ROLLBACK");
      other.close();
      db.close();
    }
  }, 30_000);

  test("a write SQLite rolled back whole for a cause no mapping names (no memory) is a fault too", async () => {
    const { db, path, rows } = freshDb();
    const lock = new WriteLock(db, path, true);
    const err = await lock.run(() => {
      db.query("INSERT INTO t VALUES ('lost')").run();
      db.exec("ROLLBACK"); // what SQLite does on SQLITE_NOMEM
      throw Object.assign(new Error("out of memory"), { code: "SQLITE_NOMEM" });
    }).then(() => null, (e) => e);
    expect(err).toMatchObject({ code: "unavailable", message: `the write to ${path} was rolled back; nothing was written` });
    expect(lock.fault?.error).toBe(err);
    expect(rows()).toEqual([]);
    db.close();
  });

  test("a BEGIN the disk or the file stopped is a fault: every write waiting for it is refused", async () => {
    const { db, path } = freshDb();
    let failBegin = true;
    // the connection as the lock sees it, its next BEGIN failing as an I/O error at the lock would
    const flaky = new Proxy(db, {
      get(target, key) {
        if (key !== "exec") return Reflect.get(target, key);
        return (sql: string) => {
          if (failBegin && sql === "BEGIN IMMEDIATE") {
            failBegin = false;
            throw Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_LOCK" });
          }
          return target.exec(sql);
        };
      },
    });
    const lock = new WriteLock(flaky, path, true);
    const results = await Promise.allSettled([lock.run(() => 1), lock.run(() => 2)]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect((results[0] as PromiseRejectedResult).reason.message).toContain(`an I/O error stopped the write to ${path}`);
    expect(lock.fault?.error.message).toContain(`an I/O error stopped the write to ${path}`);
    await lock.run(() => { db.query("INSERT INTO t VALUES ('ok')").run(); });
    expect(lock.fault).toBeUndefined();
    db.close();
  });
});

describe("GET /health after a failed write", () => {
  test("says how long ago it failed; once the failure is 10 s old, a small write of its own tells it is over", async () => {
    const svc = await openTestService(undefined, "serve");
    const clock = monotonicSkew();
    const t0 = Date.now();
    try {
      const err = await svc.store.write(() => { throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }); }).then(() => null, (e) => e);
      expect(err?.code).toBe("unavailable");
      clock.skew = 5_000;
      const told = await health(svc, "test").then(() => undefined, (e) => e);
      expect(told?.code).toBe("unavailable");
      expect(told?.message).toStartWith("the last write, 5 s ago, failed: the disk is full");
      expect(told?.extra.hint).toStartWith("free disk space and retry; ");
      // 30 s on, no other write since: health's own write commits, so the disk takes writes again
      clock.skew = 30_000;
      expect((await health(svc, "test")).workspace_id).toBeString();
      expect(svc.store.readMeta("health_probe")).toBeString();
    } finally {
      clock.restore();
      setSystemTime();
      svc.close();
    }
  });

  test("the failure's age is time that passed, not a wall clock that stepped: an hour's step forward neither ages it nor starts the probe", async () => {
    const svc = await openTestService(undefined, "serve");
    const t0 = Date.now();
    try {
      await svc.store.write(() => { throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }); }).catch(() => {});
      setSystemTime(new Date(t0 + 3_600_000)); // NTP steps the clock an hour forward
      const told = await health(svc, "test").then(() => undefined, (e) => e);
      expect(told?.message).toStartWith("the last write, 0 s ago, failed: the disk is full");
      expect(svc.store.readMeta("health_probe")).toBeUndefined();
    } finally {
      setSystemTime();
      svc.close();
    }
  });

  test("while its own write waits for the lock another process holds, health asked again answers at once; that write commits once the lock is free", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "serve");
    const other = new Database(join(dir, ".cards/cards.db"));
    const clock = monotonicSkew();
    try {
      await svc.store.write(() => { throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }); }).catch(() => {});
      clock.skew = 11_000; // the failure is 11 s old
      other.exec("BEGIN IMMEDIATE");
      const probing = health(svc, "test").then(() => undefined, (e) => e);
      await new Promise((r) => setTimeout(r, 50));
      const t0 = performance.now();
      const again = await health(svc, "test").then(() => undefined, (e) => e);
      expect(performance.now() - t0).toBeLessThan(1000);
      expect(again?.message).toStartWith("the last write, 11 s ago, failed: the disk is full");
      other.exec("ROLLBACK");
      expect(await probing).toBeUndefined();
      expect(await health(svc, "test").then(() => undefined, (e) => e)).toBeUndefined();
    } finally {
      clock.restore();
      if (other.inTransaction) other.exec("ROLLBACK");
      other.close();
      svc.close();
    }
  });

  test("a one-shot process's health does not wait for a write lock another process holds", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "embedded");
    const other = new Database(join(dir, ".cards/cards.db"));
    try {
      other.exec("BEGIN IMMEDIATE");
      const t0 = performance.now();
      expect((await health(svc, "test")).workspace_id).toBeString();
      expect(performance.now() - t0).toBeLessThan(1000);
    } finally {
      other.exec("ROLLBACK");
      other.close();
      svc.close();
    }
  });
});

/**
 * A rollback-journal file (a COMMIT there waits for every reader), a server's write lock on
 * it, and a reader in a transaction that has read: it holds a SHARED lock until it ends.
 */
function readerHoldsShared() {
  const path = join(mkdtempSync(join(tmpdir(), "cards-lock-")), "t.db");
  const setup = openSqlite(path);
  setup.exec("PRAGMA journal_mode = DELETE; CREATE TABLE t (v TEXT)");
  setup.close();
  const db = openSqlite(path);
  const reader = openSqlite(path);
  reader.exec("BEGIN");
  return { db, reader, lock: new WriteLock(db, path, true) };
}

describe("the lock's deadline", () => {
  test("follows the monotonic clock: a wall clock stepped forward while a write waits does not refuse it at once (before: 'stayed locked' an instant after the step)", async () => {
    const { db, path } = freshDb();
    const lock = new WriteLock(db, path, false); // a one-shot process's connection: it waits for the lock itself
    const other = openSqlite(path);
    other.exec("BEGIN IMMEDIATE");
    const t0 = Date.now();
    try {
      const write = lock.run(() => { db.query("INSERT INTO t VALUES ('after the wait')").run(); });
      await Bun.sleep(50);
      setSystemTime(new Date(t0 + 3_600_000)); // NTP steps the clock an hour forward
      await Bun.sleep(100);
      other.exec("COMMIT");
      await write;
      expect(db.query("SELECT count(*) AS n FROM t WHERE v = 'after the wait'").get()).toEqual({ n: 1 });
    } finally {
      setSystemTime();
      if (other.inTransaction()) other.exec("ROLLBACK");
      other.close();
      db.close();
    }
  });
  test("a COMMIT waiting for a reader's lock follows the monotonic clock too: a wall clock stepped forward meanwhile does not refuse it", async () => {
    const { db, reader, lock } = readerHoldsShared();
    reader.query("SELECT count(*) FROM t").get(); // a SHARED lock: COMMIT needs it gone
    const t0 = Date.now();
    try {
      setTimeout(() => setSystemTime(new Date(t0 + 3_600_000)), 40); // NTP steps the clock an hour forward
      setTimeout(() => reader.exec("COMMIT"), 150);
      const done = await lock.run(() => { db.query("INSERT INTO t VALUES ('x')").run(); return "ok"; });
      expect(done).toBe("ok");
      expect(db.query("SELECT v FROM t").all()).toEqual([{ v: "x" }]);
    } finally {
      setSystemTime();
      if (reader.inTransaction()) reader.exec("ROLLBACK");
      db.close();
      reader.close();
    }
  });
  test("a COMMIT that readers keep from going through is given up after the deadline (10 s) as unavailable, and nothing is written", async () => {
    const { db, reader, lock } = readerHoldsShared();
    reader.query("SELECT count(*) FROM t").get(); // a SHARED lock held past the deadline
    try {
      const t0 = performance.now();
      const err = await lock.run(() => { db.query("INSERT INTO t VALUES ('x')").run(); }).then(() => null, (e) => e);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(WRITE_LOCK_DEADLINE_MS);
      expect([err?.code, err?.message]).toEqual(["unavailable", "the workspace database stayed locked by readers; nothing was written"]);
      reader.exec("COMMIT");
      expect(db.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 0 });
    } finally {
      if (reader.inTransaction()) reader.exec("ROLLBACK");
      db.close();
      reader.close();
    }
  }, 20_000);
});

describe("opening the database", () => {
  test("gives up once another process has held the file locked past the deadline (10 s on the monotonic clock), not when the lock goes", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "cards-open-")), "cards.db");
    // another process holds the new file locked for 8 s
    const holder = Bun.spawn([process.execPath, "-e", `
      const { Database } = require("bun:sqlite");
      const db = new Database(${JSON.stringify(path)});
      db.exec("BEGIN EXCLUSIVE; CREATE TABLE t (x)");
      console.log("locked");
      setTimeout(() => { db.exec("COMMIT"); db.close(); }, 8000);
    `], { stdout: "pipe" });
    const real = performance.now;
    try {
      const reader = holder.stdout.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain("locked");
      // every reading after the first is 11 s on: the first try (a 5 s busy wait) ends past the deadline
      let calls = 0;
      performance.now = () => real.call(performance) + (calls++ > 0 ? 11_000 : 0);
      const started = Date.now();
      const err = (() => { try { openDatabase(path).close(); return null; } catch (e) { return e as CardsError; } })();
      performance.now = real;
      expect([err?.code, err?.message]).toEqual(["unavailable", expect.stringContaining("another process held it locked for 10 s")]);
      expect(Date.now() - started).toBeLessThan(7500);
    } finally {
      performance.now = real;
      holder.kill();
      await holder.exited;
    }
  }, 20_000);
});
