/**
 * The bun:sqlite Store driver. `connections: 2` (servers) adds a reader connection so a
 * read never sees another request's uncommitted write; one-shot CLI calls use one.
 */
import { SCHEMA_VERSION } from "./schema-version.ts";
import { freeBytes, openSqlite, sqliteErrorCode, type SqliteDb } from "../../platform/sqlite.ts";
import { CardsError, fromEnvironment } from "../../domain/errors.ts";
import type { CardListPage, ListQuery, ReadCall, SearchConfig, Store, StoreConfig, StoreReads, StoreTx } from "../port.ts";
import { openDatabase, WriteLock, writeError } from "./connection.ts";
import { parentPath as dirname } from "../../domain/paths.ts";
import { runReadCall, SqliteQueries, type QueryConfig } from "./queries.ts";
import { searchIndexDamaged, searchPath, SEARCH_SCHEMA_NAME, SEARCH_WAL_SIZE_LIMIT } from "./search-names.ts";
import type { ServerCheckpoints } from "./server-checkpoints.ts";
import type { SearchIndexer } from "./search-indexer.ts";
import type { ReadOp, ReadThread } from "./read-thread.ts";

// Loaded when first needed (a search; a server's indexer), so a one-shot call that does
// not search never evaluates them; require() is synchronous, and the bundle keeps it lazy.
const searchIndex = (): typeof import("./search-index.ts") => require("./search-index.ts");
const searchIndexer = (): typeof import("./search-indexer.ts") => require("./search-indexer.ts");
const serverCheckpoints = (): typeof import("./server-checkpoints.ts") => require("./server-checkpoints.ts");
const readThreads = (): typeof import("./read-thread.ts") => require("./read-thread.ts");

export interface SqliteStoreOptions {
  path: string;
  connections?: 1 | 2;
}

/** SQLite page cache per connection of a server, in KiB (32 MiB). */
export const SERVER_CACHE_KIB = 32 * 1024;

/** How often a server's indexer thread brings the search index up to date. */
export const SEARCH_TICK_MS = 25;

/** Opens (creating and migrating) the database; configure() before anything else. */
export function createSqliteStore(opts: SqliteStoreOptions): Store {
  const config: QueryConfig = { workspaceId: "", doneStatus: "", search: new Map() };
  const writerDb = openDatabase(opts.path);
  const writer = new SqliteQueries(writerDb, config);
  let readerDb: SqliteDb | undefined;
  let reader: SqliteQueries = writer;
  if (opts.connections === 2) {
    readerDb = openDatabase(opts.path);
    reader = new SqliteQueries(readerDb, config);
    // A long-lived process keeps more of the file in SQLite's own page cache (default
    // 2 MiB): a point read that misses it pays a pread and a copy (GET /cards/{id} SQL
    // 10.4 -> 6.3 us at 10,000 cards). Filled only as pages are read.
    readerDb.exec(`PRAGMA cache_size = -${SERVER_CACHE_KIB}`);
    writerDb.exec(`PRAGMA cache_size = -${SERVER_CACHE_KIB}`);
  }
  let checkpoints: ServerCheckpoints | undefined;
  if (opts.connections === 2) {
    // small checkpoints, often, by the writer; a backlog on a thread (server-checkpoints.ts)
    checkpoints = new (serverCheckpoints().ServerCheckpoints)(writerDb, opts.path);
    // Group commit runs each write in a SAVEPOINT, whose undo images go to a sub-journal.
    // On file it spills to a temp file opened per transaction and written page by page
    // (~35 pwrites per claim); in memory a claim costs ~36 us of SQLite instead of ~72 us.
    // Reads (and their sorts) run on the other connection; the largest undo set here is a
    // restore (docs/decisions.md).
    writerDb.exec("PRAGMA temp_store = MEMORY");
  }
  // Full-text search (search-index.ts): the index file, this process's connection to it
  // for catching up (opened at the first search), and a server's indexer thread.
  const searchFile = searchPath(opts.path);
  let searchDb: SqliteDb | undefined;
  let indexer: SearchIndexer | undefined;
  // a long-lived process's thread for costly list reads (read-thread.ts), started at the first
  let readThread: ReadThread | undefined;
  /** The index up to the newest event, on this thread (one-shot calls; a server whose indexer died). */
  const syncHere = (db: SqliteDb): void => {
    try {
      searchIndex().syncIndex(db, searchDb!, config.search);
    } catch (e) {
      // a read-only workspace: nothing can be written there, so the index as it stands
      // is as new as it will get (its documents still only count for their own cards)
      const code = sqliteErrorCode(e);
      if (code?.startsWith("SQLITE_READONLY")) return;
      // the pass reads the workspace database and writes the index: damage is the index's
      // only when the index's own check fails (else deleting it, as its error says, would
      // not help, and "cards and events are not affected" would be false)
      if ((code?.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") && searchIsWhole()) throw fromEnvironment(e);
      throw searchError(e, searchFile);
    }
  };
  const searchIsWhole = (): boolean => {
    try {
      return String(Object.values(searchDb!.query("PRAGMA quick_check(1)").get() ?? {})[0]) === "ok";
    } catch {
      return false;
    }
  };

  let lockInstance: WriteLock | undefined;
  // the checks a long-lived process runs in each write transaction and in GET /health (set by configure)
  let writeGuards: Array<() => void> = [];
  /** when GET /health last wrote to learn whether a remembered failure is over */
  let lastProbe = -Infinity; // monotonic time starts near 0: a first probe may come at once
  const lockOf = (): WriteLock => {
    if (!lockInstance) throw new Error("store used before configure()");
    return lockInstance;
  };

  const snapshot = <T>(fn: (r: StoreReads) => T): T => {
    const db = readerDb ?? writerDb;
    db.exec("BEGIN");
    let read = false;
    try {
      const out = fn(reader);
      read = true;
      return out;
    } finally {
      // after a failed read, ending the snapshot may fail as well (SQLite's corrupt-page
      // error again, from the attached index): the read's own error is the one to tell
      try {
        db.exec("COMMIT");
      } catch (e) {
        if (db.inTransaction()) try { db.exec("ROLLBACK"); } catch { /* the next BEGIN tells */ }
        if (read) throw e;
      }
    }
  };
  /** `inline` here, or on the read thread when the read is costly and the thread is up. */
  let closed = false;
  const offThread = <T>(op: ReadOp, q: ListQuery | readonly ReadCall[], inline: () => T): T | Promise<T> => {
    if (!readThread?.alive || (op !== "batch" && !readThreads().costlyRead(q as ListQuery))) return inline();
    const { ReadThreadDown } = readThreads();
    return readThread.run<T>(op, q).catch((e: unknown) => {
      if (!(e instanceof ReadThreadDown)) throw e;
      // the thread died: read here; the store was closed meanwhile: nothing is left to read
      if (closed) throw new CardsError("unavailable", "the workspace was closed while this read was running", { hint: "retry the request" });
      return inline();
    });
  };

  // Reads are forwarded method by method to the reader connection.
  const reads: StoreReads = {
    getCard: (id, o) => reader.getCard(id, o),
    listCards: (q) => reader.listCards(q),
    takeNextCandidates: (q) => reader.takeNextCandidates(q),
    countByStatus: (q) => reader.countByStatus(q),
    openBlockers: (id) => reader.openBlockers(id),
    blockedBySources: (id) => reader.blockedBySources(id),
    listLinks: (id) => reader.listLinks(id),
    listComments: (id) => reader.listComments(id),
    getComment: (c, id) => reader.getComment(c, id),
    listEvents: (q) => reader.listEvents(q),
    lastEventId: () => reader.lastEventId(),
    listSignals: (a, l) => reader.listSignals(a, l),
    lastSignalSeq: () => reader.lastSignalSeq(),
    historyThrough: () => reader.historyThrough(),
    getMeta: (k) => reader.getMeta(k),
    hasCardAboveSchema: (t, v) => reader.hasCardAboveSchema(t, v),
    hasLinkOfType: (t) => reader.hasLinkOfType(t),
    cardsInUse: () => reader.cardsInUse(),
    damage: () => [...reader.damage(), ...searchIndex().indexDamage(searchFile)].slice(0, 20),
    countInStatus: (f, s, c) => reader.countInStatus(f, s, c),
    blockedCards: (f, l) => reader.blockedCards(f, l),
    dueCards: (f, s, c, a, b, l) => reader.dueCards(f, s, c, a, b, l),
    nextDue: (f, s, c, a) => reader.nextDue(f, s, c, a),
    getUser: (id) => reader.getUser(id),
    listUsers: () => reader.listUsers(),
    getIdempotency: (k) => reader.getIdempotency(k),
    cardCount: () => reader.cardCount(),
    eventCount: () => reader.eventCount(),
    iterateUsers: () => reader.iterateUsers(),
    iterateCards: () => reader.iterateCards(),
    iterateEvents: () => reader.iterateEvents(),
  };

  return {
    driver: "sqlite-bun",
    ...reads,
    write: <T>(fn: (tx: StoreTx) => T | Promise<T>) => lockOf().run(() => fn(writer)),
    readOnly: () => writerDb.immutable || lockOf().readOnly(),
    async health(): Promise<void> {
      for (const guard of writeGuards) guard();
      if (writerDb.immutable) {
        throw new CardsError("unavailable", `${opts.path} is on a read-only disk: it is read as it is, and nothing can be written`, {
          hint: "serve a copy on a writable disk to take writes (docs/backup.md)",
        });
      }
      const lock = lockInstance;
      if (lock?.readOnly()) {
        throw new CardsError("unavailable", `${opts.path} was opened read-only (its disk or its file could not be written when this process opened it); every write will fail`, {
          hint: "make the workspace's .cards directory and its files writable (remount the disk read-write, fix their permissions); a `cards serve` or `cards mcp` that opened it then needs a restart (a one-shot call does not)",
        });
      }
      if (!lock?.fault) return;
      // a failure this old may be over: a small write of our own tells, at most once per PROBE_AFTER_MS
      const now = performance.now(); // the fault's age on the monotonic clock, as it was noted
      // after a full disk, what is free there now (each answer says it, probe or not)
      const free = /^the disk is full/.test(lock.fault.error.message) ? await freeBytes(dirname(opts.path)) : undefined;
      if (lock.fault && now - lock.fault.at >= PROBE_AFTER_MS && now - lastProbe >= PROBE_AFTER_MS) {
        lastProbe = now;
        // a full disk is over only with room for more than the probe's one row, which fits
        // in the last KiB where a card write does not
        if (free === undefined || free >= DISK_HEADROOM) {
          try {
            await lock.run(() => writer.setMeta(HEALTH_PROBE_KEY, new Date().toISOString()));
          } catch {
            /* remembered by the lock when the disk or the file refused it */
          }
          if (!lock.fault) return;
        }
      }
      // a write may have cleared it while freeBytes was read
      const fault = lock.fault;
      if (!fault) return;
      const ago = Math.round((performance.now() - fault.at) / 1000);
      const room = free !== undefined && free < DISK_HEADROOM ? `the disk holding ${opts.path} has ${Math.floor(free / 1024)} KiB free, less than the ${DISK_HEADROOM / 1024 / 1024} MiB GET /health asks for after a full disk; ` : "";
      throw new CardsError("unavailable", `${room}the last write, ${ago} s ago, failed: ${fault.error.message}`, {
        hint: `${fault.error.extra.hint ?? "check the disk and the workspace's .cards directory"}; this answer stands until a write that changes a row commits (GET /health tries one of its own when the failure is ${PROBE_AFTER_MS / 1000} s old)`,
      });
    },
    configure(o: StoreConfig): void {
      config.workspaceId = o.workspaceId;
      config.doneStatus = o.doneStatus;
      let search = o.search;
      Object.defineProperty(config, "search", {
        get: () => (typeof search === "function" ? (search = search()) : search),
        set: (v: SearchConfig) => { search = v; },
        enumerable: true,
      });
      // a long-lived process writes only while its path still names the file it opened
      const sameFile = opts.connections === 2 ? fileGuard(opts.path) : undefined;
      // and only while the schema is the one it knows: a newer cards (a one-shot call, a
      // hook) may have migrated the file since this process opened it
      const sameSchema = opts.connections === 2 ? schemaGuard(writerDb, opts.path) : undefined;
      writeGuards = sameFile && sameSchema ? [sameFile, sameSchema] : [];
      lockInstance = new WriteLock(writerDb, opts.path, opts.connections === 2, {
        beforeBegin: () => {
          // BEGIN IMMEDIATE would take the write lock of every attached database too: with
          // one connection, the search index leaves before a write (a search attaches it again)
          if (writer.searchAttached) {
            writerDb.detach(SEARCH_SCHEMA_NAME);
            writer.searchAttached = false;
          }
          checkpoints?.beforeBegin();
        },
        // under the write lock: a newer cards migrating the file, or a backup moved into
        // place, while this write waited for the lock is seen before anything is written
        afterBegin: () => {
          for (const guard of writeGuards) guard();
        },
      });
      if (opts.connections === 2) {
        const { configEntries, SearchIndexer } = searchIndexer();
        indexer = new SearchIndexer(opts.path, searchFile, configEntries(config.search), SEARCH_TICK_MS);
        readThread = new (readThreads().ReadThread)({ path: opts.path, searchPath: searchFile, cacheKib: SERVER_CACHE_KIB }, () => ({
          workspaceId: config.workspaceId, doneStatus: config.doneStatus, search: configEntries(config.search),
        }));
      }
    },
    prepareSearch(): void | Promise<void> {
      const db = readerDb ?? writerDb;
      if (db.immutable) {
        // a read-only disk without WAL index files (connection.ts): the index as it stands,
        // read the same way; nothing can be written to bring it up to date
        try {
          if (!reader.searchAttached) db.attach(searchFile, SEARCH_SCHEMA_NAME);
          reader.searchAttached = true;
          return;
        } catch (e) {
          throw searchError(e, searchFile);
        }
      }
      try {
        searchDb ??= searchIndex().openSearchDb(searchFile);
        if (!reader.searchAttached) {
          db.attach(searchFile, SEARCH_SCHEMA_NAME);
          reader.searchAttached = true;
          db.exec(`PRAGMA ${SEARCH_SCHEMA_NAME}.journal_size_limit = ${SEARCH_WAL_SIZE_LIMIT}`);
        }
      } catch (e) {
        throw searchError(e, searchFile);
      }
      if (!indexer?.alive) return syncHere(db);
      const head = searchIndex().headSeq(db);
      if (indexer.covers(head)) return;
      return indexer.waitFor(head).then((r) => { if (r === "dead") syncHere(db); });
    },
    readMeta: (key) => reader.getMeta(key) ?? undefined,
    writeMeta(key: string, value: string): void {
      if (lockInstance) throw new Error("writeMeta is for opening, before configure()");
      try {
        writerDb.exec("BEGIN IMMEDIATE");
        try {
          writer.setMeta(key, value);
          writerDb.exec("COMMIT");
        } catch (e) {
          if (writerDb.inTransaction()) writerDb.exec("ROLLBACK");
          throw e;
        }
      } catch (e) {
        throw writeError(e, opts.path);
      }
    },
    tryWriteMeta(key: string, value: string, expected: string | undefined): boolean {
      writerDb.exec("PRAGMA busy_timeout = 0");
      try {
        writerDb.exec("BEGIN IMMEDIATE");
      } catch {
        return false; // another writer holds the database (or this connection is in a transaction)
      } finally {
        if (opts.connections !== 2) writerDb.exec("PRAGMA busy_timeout = 5000");
      }
      try {
        const same = (writer.getMeta(key) ?? undefined) === expected;
        if (same) writer.setMeta(key, value);
        writerDb.exec(same ? "COMMIT" : "ROLLBACK");
        return same;
      } catch {
        try { writerDb.exec("ROLLBACK"); } catch { /* already rolled back */ }
        return false;
      }
    },
    snapshot,
    readPage: (q) => offThread<CardListPage>("page", q, () => snapshot((r) => ({ ...r.listCards(q), lastEventId: r.lastEventId() }))),
    readCounts: (q) => offThread("count", { ...q, limit: 0 }, () => reader.countByStatus(q)),
    readCandidates: (q) => offThread("candidates", q, () => reader.takeNextCandidates(q)),
    readBatch: (calls) => offThread("batch", calls, () => snapshot((r) => calls.map((c) => runReadCall(r, c)))),
    reconfigure(o: { workspaceId: string; doneStatus: string; search: SearchConfig }): Promise<void> {
      return lockOf().run(() => {
        config.workspaceId = o.workspaceId;
        config.doneStatus = o.doneStatus;
        config.search = o.search;
        // the index re-indexes the types whose fields changed at its next pass
        indexer?.reconfigure(searchIndexer().configEntries(o.search));
        readThread?.reconfigure({ workspaceId: o.workspaceId, doneStatus: o.doneStatus, search: searchIndexer().configEntries(o.search) });
      });
    },
    compactLog() {
      try {
        writerDb.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        // busy or full: the WAL stays as it is
      }
    },
    backupTo(path: string) {
      // made under another name and linked into place once whole: a backup that fails (a
      // full disk, a kill) leaves no file that is not a database, and never replaces one
      const fs = process.getBuiltinModule("node:fs") as typeof import("node:fs");
      const tmp = `${path}.${process.pid}.partial`;
      try {
        (readerDb ?? writerDb).query("VACUUM INTO ?").run(tmp);
        // VACUUM INTO writes a rollback-journal file: the copy is made a WAL file like the
        // original, so putting it in place needs nothing more
        const copy = openSqlite(tmp, { create: false, persistWal: false });
        let cards: number;
        try {
          copy.exec("PRAGMA journal_mode = WAL");
          // what the copy holds (writers go on in the live database meanwhile)
          cards = (copy.query("SELECT count(*) AS n FROM cards").get() as { n: number }).n;
        } finally {
          copy.close();
        }
        const fd = fs.openSync(tmp, "r");
        try { fs.fsyncSync(fd); } finally { fs.closeSync(fd); }
        fs.linkSync(tmp, path); // EEXIST: a file of that name appeared meanwhile
        return { cards };
      } finally {
        // never in place of the error that stopped the backup (on a read-only disk even
        // removing a file that is not there fails)
        for (const f of [tmp, `${tmp}-journal`, `${tmp}-wal`, `${tmp}-shm`]) {
          try { fs.rmSync(f, { force: true }); } catch { /* nothing of it to remove */ }
        }
      }
    },
    close() {
      closed = true;
      readThread?.stop();
      indexer?.stop();
      try { searchDb?.close(); } catch { /* closing */ }
      checkpoints?.stop();
      readerDb?.close();
      // long-lived processes leave a checkpointed, empty WAL behind; one-shot CLI calls
      // leave it to SQLite's automatic checkpoints (a full one per call would cost ms)
      if (opts.connections === 2) {
        try {
          writerDb.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        } catch {
          // another process holds the database; its checkpoints take over
        }
      }
      writerDb.close();
    },
  };
}

/** An error of the search index file as the caller should see it. */
function searchError(e: unknown, file: string): unknown {
  const code = sqliteErrorCode(e);
  if (code === "SQLITE_BUSY") {
    // another process has held the index past the busy timeout: a rebuild
    return new CardsError("unavailable", `the full-text index ${file} is being rebuilt by another process`, { hint: "retry in a few seconds; searches without q are not affected" });
  }
  if (code === "SQLITE_CANTOPEN" || code === "SQLITE_PERM") {
    return new CardsError("unavailable", `cannot open the full-text index ${file}`, { hint: "the first search creates it: check that the workspace's .cards directory is writable" });
  }
  if (code?.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") return searchIndexDamaged((e as Error).message, file);
  return writeError(e, file);
}

/**
 * A write the disk or the file stopped this long ago, with none committed since: GET /health
 * writes HEALTH_PROBE_KEY to learn whether it is over (an idle server would not know).
 */
const PROBE_AFTER_MS = 10_000;

/** Free bytes on the disk after a full one before GET /health tries its own write (and may turn 200). */
const DISK_HEADROOM = 1024 * 1024;

/** The meta row GET /health writes to learn whether a failed write's cause is gone. */
const HEALTH_PROBE_KEY = "health_probe";

/** Throws `unavailable` once the database's schema is not the one this build knows (a newer cards migrated it). */
function schemaGuard(db: SqliteDb, path: string): () => void {
  const version = db.query("PRAGMA user_version");
  return () => {
    const now = Number(version.get()?.user_version ?? 0);
    if (now === SCHEMA_VERSION) return;
    throw new CardsError("unavailable", `${path} was migrated to schema ${now} by another version of cards while this process had it open (it knows schema ${SCHEMA_VERSION}); nothing was written`, {
      hint: "restart `cards serve` (or `cards mcp`) with the cards binary that migrated it (docs/backup.md, Upgrading)",
    });
  };
}

/**
 * Remembers which file `path` names now; the returned check throws `unavailable` once the
 * path names another file or none (a backup moved into place, the file deleted) while
 * this process still writes to the one it opened: those writes would be lost.
 */
function fileGuard(path: string): () => void {
  const fs = process.getBuiltinModule("node:fs") as typeof import("node:fs");
  const id = (): string => {
    try {
      const st = fs.statSync(path, { throwIfNoEntry: false });
      return st ? `${st.dev}:${st.ino}` : "gone";
    } catch (e) {
      // a folder on the path replaced by a file (ENOTDIR), its permissions changed (EACCES)
      return `unreachable:${(e as { code?: string }).code ?? "error"}`;
    }
  };
  const opened = id();
  return () => {
    const now = id();
    if (now === opened) return;
    if (now.startsWith("unreachable:")) {
      throw new CardsError("unavailable", `${path} cannot be reached now (${now.slice(12)}) while this process has it open; nothing was written`, {
        hint: "check the workspace's .cards directory: it was moved, replaced or its permissions changed; restart `cards serve` (or `cards mcp`) once it is back",
      });
    }
    throw new CardsError("unavailable", `${path} was replaced or deleted while this process had it open; nothing was written`, {
      hint: "restart `cards serve` (or `cards mcp`) so it opens the file now in place; put backups in place only while no server runs (docs/backup.md)",
    });
  };
}
