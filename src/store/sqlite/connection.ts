/**
 * Opening the workspace database: pragmas, migrations, and the write lock.
 * One writer connection takes BEGIN IMMEDIATE under an in-process mutex; a second
 * connection serves reads in long-lived processes (stack.md §4.2: a shared connection
 * lets a read see another request's uncommitted write).
 */
import { parentPath as dirname } from "../../domain/paths.ts";
import { fileSize, openSqlite, sqliteErrorCode, type SqliteDb } from "../../platform/sqlite.ts";
import { CardsError, fromEnvironment, isCardsError } from "../../domain/errors.ts";
import { SCHEMA_VERSION } from "./schema-version.ts";

/** At most this many queued writes share one transaction. */
export const GROUP_COMMIT_MAX = 64;

/** How long a writer keeps retrying for the lock before answering `unavailable`. */
export const WRITE_LOCK_DEADLINE_MS = 10_000;

/**
 * A WAL that grew past this (64 MiB) is cut back to it when it starts over. Not less: at
 * 4 MiB, a server's WAL that had grown past it (a search indexer's read held a checkpoint
 * back) was cut and grown again at every checkpoint (take-next at 8 clients: 4.8k -> 4.3k
 * claims/s).
 */
export const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

/** Creates the database's folder (node:fs loads only here: ~1.3 ms on every call otherwise). */
function makeStateDir(path: string): void {
  try {
    (process.getBuiltinModule("node:fs") as typeof import("node:fs")).mkdirSync(dirname(path), { recursive: true });
  } catch (e) {
    throw new CardsError("unavailable", `cannot create the state directory ${dirname(path)}: ${(e as Error).message}`, {
      hint: "check that the workspace directory is writable",
    });
  }
}

/** How long opening keeps retrying while other processes create or migrate the same file. */
export const OPEN_DEADLINE_MS = 10_000;

/**
 * Opens, configures and migrates the database. Processes that open a new workspace at
 * the same moment can meet where SQLite answers SQLITE_BUSY without waiting (switching
 * the file to WAL needs an exclusive lock): opening is then retried from the start
 * with short jittered pauses until OPEN_DEADLINE_MS.
 */
export function openDatabase(path: string): SqliteDb {
  // before SQLite opens it: opening an empty file deletes the WAL beside it
  if (!fileSize(path)) assertNotLost(path);
  const deadline = performance.now() + OPEN_DEADLINE_MS; // monotonic: a clock step must not end or stretch the retries
  for (;;) {
    let db: SqliteDb | undefined;
    try {
      try {
        db = openSqlite(path);
      } catch (e) {
        if (sqliteErrorCode(e) !== "SQLITE_CANTOPEN") throw e;
        makeStateDir(path);
        db = openSqlite(path);
      }
      // NOTE perf-baselines.md traps 1 and 3: busy_timeout via exec, before journal_mode.
      // A journal_size_limit (any) makes the last close truncate the kept WAL to 0 bytes.
      db.exec(`PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA journal_size_limit = ${WAL_SIZE_LIMIT}`);
      const version = schemaVersion(db);
      if (version > SCHEMA_VERSION) {
        throw new CardsError("unavailable", `${path} was written by a newer version of cards (schema ${version}; this one knows up to ${SCHEMA_VERSION})`, {
          hint: "upgrade cards: an older version could misread or damage what the newer one wrote",
        });
      }
      // WAL is a property of the file: set when the schema is first created, and again for a
      // file that lost it (a `cards backup` copy put in place is a rollback-journal file,
      // where a COMMIT must wait for every reader)
      if (version === 0) db.exec("PRAGMA journal_mode = WAL");
      else if (db.query("PRAGMA journal_mode").get()?.journal_mode !== "wal") {
        try {
          db.exec("PRAGMA journal_mode = WAL");
        } catch (e) {
          // a read-only file (a backup on read-only media) is read as it is
          if (!sqliteErrorCode(e)?.startsWith("SQLITE_READONLY")) throw e;
        }
      }
      if (version < SCHEMA_VERSION) migrate(db);
      return db;
    } catch (e) {
      try { db?.close(); } catch { /* closing a half-open handle */ }
      if ((sqliteErrorCode(e) === "SQLITE_BUSY" || transientReadOnly(e, path)) && performance.now() < deadline) {
        sleepSync(2 + Math.random() * 8);
        continue;
      }
      if (e instanceof CardsError) throw e;
      if (sqliteErrorCode(e) === "SQLITE_CANTOPEN" && unshareable(path)) return openImmutable(path);
      throw openError(path, e);
    }
  }
}

/**
 * A database on a read-only disk with no `-shm` beside it (copied without it, or from a
 * snapshot): SQLite can neither make the WAL index nor read without one. With no WAL to
 * apply either, nothing can change the file, which is then read as it is (`immutable`).
 */
export function unshareable(path: string): boolean {
  if (!fileSize(path) || fileSize(`${path}-wal`) || fileSize(`${path}-shm`) !== undefined) return false;
  const fs = process.getBuiltinModule("node:fs") as typeof import("node:fs");
  try {
    fs.accessSync(dirname(path), fs.constants.W_OK);
    return false;
  } catch (e) {
    return (e as { code?: string }).code === "EROFS";
  }
}

function openImmutable(path: string): SqliteDb {
  let db: SqliteDb | undefined;
  try {
    db = openSqlite(path, { immutable: true });
    const version = schemaVersion(db);
    if (version !== SCHEMA_VERSION) {
      throw new CardsError("unavailable", `${path} is on a read-only disk and at schema ${version}; this version of cards reads schema ${SCHEMA_VERSION}`, {
        hint: version < SCHEMA_VERSION ? "open it once where it is writable (any command upgrades it), or with the version of cards that wrote it" : "upgrade cards",
      });
    }
    return db;
  } catch (e) {
    try { db?.close(); } catch { /* closing a half-open handle */ }
    throw isCardsError(e) ? e : openError(path, e);
  }
}

/**
 * A missing or empty database beside what only a used one leaves: the search index (made
 * after the schema), or a WAL with commits in it (made after the file's first page).
 * Stored artifacts are no sign: a restore may find them copied in first. The database
 * was deleted or emptied; starting an empty one would hide that, and SQLite would delete
 * the WAL and its last commits. Cheap: one stat of the database file on each open, a
 * few more only when it is missing or empty.
 */
function assertNotLost(path: string): void {
  const dir = dirname(path);
  const wal = `${path}-wal`;
  const left = fileSize(`${dir}/search.db`) !== undefined ? [`${dir}/search.db`] : [];
  if (fileSize(wal)) left.push(wal);
  // another process may have created the file meanwhile (its first page comes before
  // anything in the WAL): then this is a new workspace being made, not a lost one
  if (left.length === 0 || fileSize(path)) return;
  const walAside = left.includes(wal) ? `move ${wal} and ${path}-shm aside (SQLite would apply that WAL over the copy), then ` : "";
  throw new CardsError("unavailable", `${path} is missing or empty, but ${dir} holds what a used workspace leaves (${left.join(", ")}): the database was deleted or emptied`, {
    hint: `put the database back from a backup: ${walAside}copy it to ${path} (docs/backup.md); or, to start again from a dump, move ${dir} away first and run \`cards restore\``,
  });
}

/**
 * "attempt to write a readonly database" from a file that is writable: another process
 * was creating, switching to WAL or recovering the same new database at that moment
 * (seen once in ~1,000 simultaneous first opens under load). A file that really is
 * read-only answers at once.
 */
function transientReadOnly(e: unknown, path: string): boolean {
  if (!sqliteErrorCode(e)?.startsWith("SQLITE_READONLY")) return false;
  const fs = process.getBuiltinModule("node:fs") as typeof import("node:fs");
  try {
    fs.accessSync(path, fs.constants.W_OK);
    fs.accessSync(dirname(path), fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Blocks this thread for `ms` (opening is synchronous; a pause of a few ms at most). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function openError(path: string, e: unknown): CardsError {
  const code = sqliteErrorCode(e);
  const msg = (e as Error)?.message ?? String(e);
  if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
    return new CardsError("unavailable", `${path} is not a cards database (${msg})`, {
      hint: "move the file away and run `cards restore` from a dump or backup",
    });
  }
  if (code === "SQLITE_READONLY" || code === "SQLITE_CANTOPEN" || code === "SQLITE_PERM") {
    return new CardsError("unavailable", `cannot open ${path} for writing (${msg})`, {
      // SQLite says "unable to open database file" for a descriptor limit too
      hint: code === "SQLITE_CANTOPEN"
        ? "check the permissions of the workspace's .cards directory and its file system, and that this process may open more files (ulimit -n)"
        : "check the permissions of the workspace's .cards directory",
    });
  }
  if (code === "SQLITE_FULL" || code === "SQLITE_IOERR") {
    return new CardsError("unavailable", `cannot write ${path} (${msg})`, { hint: "free disk space and retry" });
  }
  if (code === "SQLITE_BUSY") {
    return new CardsError("unavailable", `cannot open ${path}: another process held it locked for ${OPEN_DEADLINE_MS / 1000} s (${msg})`, {
      hint: "retry: a long write or, after an upgrade of cards, the first open bringing a large database to the new schema holds it meanwhile",
    });
  }
  return new CardsError("unavailable", `cannot open ${path}: ${msg}`);
}

const schemaVersion = (db: SqliteDb): number => Number(db.query("PRAGMA user_version").get()?.user_version ?? 0);

function migrate(db: SqliteDb): void {
  // loaded only here: a current database (every call but the first) never needs the SQL
  const { MIGRATIONS } = require("./schema.ts") as typeof import("./schema.ts");
  const current = () => schemaVersion(db);
  if (current() >= MIGRATIONS.length) return;
  db.exec("BEGIN IMMEDIATE");
  try {
    for (let v = current(); v < MIGRATIONS.length; v++) {
      db.exec(MIGRATIONS[v]!);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    }
    db.exec("COMMIT");
  } catch (e) {
    db.exec("ROLLBACK");
    throw e;
  }
}

/** What the writer does before each transaction. */
export interface TxHooks {
  beforeBegin?(): void;
  /** inside the transaction, before any write of it runs: a throw rolls it back and refuses the writes */
  afterBegin?(): void;
}

const NO_HOOKS: TxHooks = {};

/**
 * Serialises in-process writers and takes SQLite's write lock with short jittered
 * retries instead of the busy handler (perf-baselines.md §5: the default handler gives
 * 240 ms p99 with 8 racing processes; a retry loop gives ~56 ms).
 */
export class WriteLock {
  private readonly queue: Array<{ fn: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void }> = [];
  private draining = false;
  private lastFault: { error: CardsError; at: number } | undefined;

  /**
   * The last write the disk or the file stopped (full, read-only, an I/O error, damage,
   * replaced or migrated under this process), while no write that changed a row committed
   * after it.
   */
  get fault(): { error: CardsError; at: number } | undefined {
    return this.lastFault;
  }

  /**
   * Whether SQLite opened the file read-only (its disk or the file could not be written at
   * open): every write will fail. A no-op UPDATE is refused so before any lock is asked
   * for; a writable file answers at once too (a lock held elsewhere is SQLITE_BUSY, not
   * waited for).
   */
  readOnly(): boolean {
    if (this.db.inTransaction()) return false; // a write is underway on it
    if (!this.dedicated) this.db.exec("PRAGMA busy_timeout = 0");
    try {
      this.db.exec("UPDATE meta SET value = value WHERE 0");
      return false;
    } catch (e) {
      return sqliteErrorCode(e)?.startsWith("SQLITE_READONLY") === true;
    } finally {
      if (!this.dedicated) this.db.exec("PRAGMA busy_timeout = 5000");
    }
  }

  /** Rows changed on this connection so far (rolled-back ones too: read it only around a commit). */
  private totalChanges(): number {
    return Number(this.db.query("SELECT total_changes() AS n").get()?.n ?? 0);
  }

  /** Remembers `err` when `isFault`: the disk or the file stopped a write, not a caller's own error. */
  private noted(err: unknown, isFault: boolean): unknown {
    if (isFault && isCardsError(err) && err.code === "unavailable") this.lastFault = { error: err, at: performance.now() };
    return err;
  }

  /**
   * `dedicated`: the connection is only used for writes (servers), so it keeps
   * busy_timeout at 0 for good instead of switching it around every BEGIN.
   */
  constructor(private readonly db: SqliteDb, private readonly path: string, private readonly dedicated = false, private readonly hooks: TxHooks = NO_HOOKS) {
    if (dedicated) db.exec("PRAGMA busy_timeout = 0");
  }

  /**
   * Runs `fn` inside a write transaction. Writes that queue up while one runs share the
   * next transaction (group commit): each runs in its own SAVEPOINT, so a failing write
   * rolls back alone, and every caller is answered only after the COMMIT.
   */
  run<T>(fn: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        // let requests that are already read off the sockets join this transaction
        if (this.dedicated) await new Promise((r) => setImmediate(r));
        try {
          this.hooks.beforeBegin?.();
          await this.begin();
        } catch (e) {
          // a mapped BEGIN error is a fault; a lock held past the deadline is not: it tells
          // nothing of the disk or the file
          this.noted(e, !isLockTimeout(e));
          for (const job of this.queue.splice(0)) job.reject(e);
          break;
        }
        try {
          this.hooks.afterBegin?.();
        } catch (e) {
          try { this.db.exec("ROLLBACK"); } catch { /* already rolled back */ }
          this.noted(e, true);
          for (const job of this.queue.splice(0)) job.reject(e);
          break;
        }
        const batch = this.queue.splice(0, GROUP_COMMIT_MAX);
        const outcomes: Array<{ ok: boolean; value: unknown }> = [];
        // set when SQLite rolled the whole transaction back on its own (an I/O error, a
        // full disk, no memory): nothing of this batch is written, and nothing more runs
        let lost: unknown;
        // while a fault is remembered: whether the last word of this batch on the disk is a
        // write that changed a row (a replayed Idempotency-Key, a PATCH that changes nothing
        // or a lost claim commits nothing, and says nothing of the disk); a write refused
        // after it takes it back
        let wroteRow = false;
        for (const job of batch) {
          if (lost !== undefined) {
            outcomes.push({ ok: false, value: lost });
            continue;
          }
          this.db.exec("SAVEPOINT w");
          const changesBefore = this.lastFault !== undefined ? this.totalChanges() : -1;
          try {
            const value = await job.fn();
            this.db.exec("RELEASE w");
            if (changesBefore >= 0 && this.totalChanges() > changesBefore) wroteRow = true;
            outcomes.push({ ok: true, value });
          } catch (e) {
            // a statement can meet a read-only file or a full disk before COMMIT does
            const { err, isFault } = writeFault(e, this.path);
            this.noted(err, isFault);
            if (isFault) wroteRow = false;
            if (this.db.inTransaction()) {
              try {
                this.db.exec("ROLLBACK TO w");
                this.db.exec("RELEASE w");
                outcomes.push({ ok: false, value: err });
                continue;
              } catch {
                try { this.db.exec("ROLLBACK"); } catch { /* already gone */ }
              }
            }
            lost = this.noted(isCardsError(err) ? err : new CardsError("unavailable", `the write to ${this.path} was rolled back; nothing was written`, { hint: "retry" }), true);
            outcomes.push({ ok: false, value: lost });
          }
        }
        if (lost !== undefined) {
          for (let i = 0; i < batch.length; i++) batch[i]!.reject(outcomes[i]!.ok ? lost : outcomes[i]!.value);
          continue;
        }
        try {
          await this.commit();
        } catch (e) {
          try { this.db.exec("ROLLBACK"); } catch { /* already rolled back */ }
          const { err, isFault } = writeFault(e, this.path);
          this.noted(err, isFault);
          for (let i = 0; i < batch.length; i++) batch[i]!.reject(outcomes[i]!.ok ? err : outcomes[i]!.value);
          continue;
        }
        // plain loops here and above: a one-shot CLI write pays ~0.15 ms for a first forEach
        for (let i = 0; i < batch.length; i++) {
          const o = outcomes[i]!;
          if (o.ok) batch[i]!.resolve(o.value);
          else batch[i]!.reject(o.value);
        }
        // a commit clears the fault only when it wrote a row: a batch whose writes the disk
        // refused one by one, or that changed nothing, says nothing of the disk
        if (wroteRow) this.lastFault = undefined;
      }
    } finally {
      this.draining = false;
    }
  }

  /**
   * COMMIT, retried while SQLite answers BUSY: the transaction stays open then (a file
   * not in WAL mode commits only when no reader holds it). Gives up as `unavailable`
   * after WRITE_LOCK_DEADLINE_MS.
   */
  private async commit(): Promise<void> {
    const deadline = performance.now() + WRITE_LOCK_DEADLINE_MS;
    for (;;) {
      try {
        this.db.exec("COMMIT");
        return;
      } catch (e) {
        if (sqliteErrorCode(e) !== "SQLITE_BUSY" || !this.db.inTransaction()) throw e;
        if (performance.now() > deadline) {
          throw lockTimeout(new CardsError("unavailable", "the workspace database stayed locked by readers; nothing was written", { hint: "retry" }));
        }
        await new Promise((r) => setTimeout(r, 1 + Math.random() * 2));
      }
    }
  }

  private async begin(): Promise<void> {
    // deadlines on the monotonic clock: a wall clock stepped forward would refuse at once
    const deadline = performance.now() + WRITE_LOCK_DEADLINE_MS;
    if (!this.dedicated) this.db.exec("PRAGMA busy_timeout = 0");
    try {
      for (;;) {
        try {
          this.db.exec("BEGIN IMMEDIATE");
          return;
        } catch (e) {
          if (sqliteErrorCode(e) !== "SQLITE_BUSY") throw writeFault(e, this.path).err;
          if (performance.now() > deadline) {
            throw lockTimeout(new CardsError("unavailable", "the workspace database stayed locked by another writer", {
              hint: "retry; many agents on one workspace are better served through `cards serve`",
            }));
          }
          await new Promise((r) => setTimeout(r, 1 + Math.random() * 2));
        }
      }
    } finally {
      if (!this.dedicated) this.db.exec("PRAGMA busy_timeout = 5000");
    }
  }
}

/** Refusals because another process held the lock too long: they tell nothing of the disk or the file. */
const lockTimeouts = new WeakSet<object>();
function lockTimeout(e: CardsError): CardsError {
  lockTimeouts.add(e);
  return e;
}
const isLockTimeout = (e: unknown): boolean => typeof e === "object" && e !== null && lockTimeouts.has(e);

/**
 * A write's error as the caller gets it, and whether it tells of the disk or the file (the
 * fault GET /health reports): writeError's, or any other the environment caused (a file
 * SQLite could not open, no memory, no file descriptors left).
 */
function writeFault(e: unknown, path: string): { err: unknown; isFault: boolean } {
  const err = writeError(e, path);
  if (err !== e) return { err, isFault: true };
  if (isCardsError(e)) return { err: e, isFault: false };
  const env = fromEnvironment(e);
  return { err: env, isFault: env !== e };
}

/** A write's SQLite error as `unavailable` naming the file, when the cause is the file or the disk. */
export function writeError(e: unknown, path: string): unknown {
  const code = sqliteErrorCode(e);
  if (code === "SQLITE_FULL") return new CardsError("unavailable", `the disk is full; nothing was written to ${path}`, { hint: "free disk space and retry" });
  if (code?.startsWith("SQLITE_READONLY")) return new CardsError("unavailable", `${path} is read-only; nothing was written`, { hint: "check the permissions of the workspace's .cards directory and its file system" });
  if (code?.startsWith("SQLITE_IOERR")) return new CardsError("unavailable", `an I/O error stopped the write to ${path}; nothing was written`, { hint: "check the disk and retry" });
  if (code?.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") {
    return new CardsError("unavailable", `${path} is damaged (${(e as Error).message}); nothing was written`, {
      hint: "stop the processes using it and restore from a backup or dump (docs/backup.md); `cards check` reports whether the definitions still load",
    });
  }
  return e;
}
