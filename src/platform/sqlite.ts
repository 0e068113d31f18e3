/**
 * The only door to bun:sqlite. Store drivers get a small `SqliteDb` and never name Bun.
 * NOTE stack.md §4 and perf-baselines.md traps: busy_timeout is set with exec (a prepared
 * pragma does nothing), and before journal_mode=WAL.
 */
import { Database, constants } from "bun:sqlite";

export type SqlValue = string | number | bigint | null | Uint8Array;

export interface SqliteStatement {
  get(...params: SqlValue[]): Record<string, unknown> | null;
  all(...params: SqlValue[]): Record<string, unknown>[];
  run(...params: SqlValue[]): { changes: number; lastInsertRowid: number | bigint };
  iterate(...params: SqlValue[]): IterableIterator<Record<string, unknown>>;
}

export interface SqliteDb {
  exec(sql: string): void;
  /** false once SQLite has rolled the transaction back on its own (an I/O error, a full disk) */
  inTransaction(): boolean;
  /** cached prepared statement */
  query(sql: string): SqliteStatement;
  /** attaches another database file as `schema` (its WAL files kept, as for the main one) */
  attach(path: string, schema: string): void;
  detach(schema: string): void;
  close(): void;
}

export interface OpenSqliteOptions {
  readonly?: boolean;
  create?: boolean;
}

/** Opens a database file; throws the driver's error (with `code`) when it cannot. */
export function openSqlite(path: string, opts: OpenSqliteOptions = {}): SqliteDb {
  const db = opts.readonly
    ? new Database(path, { readonly: true, strict: true })
    : new Database(path, { create: opts.create ?? true, readwrite: true, strict: true });
  // keep the WAL and its index file when the last connection closes (emptied: the close
  // still checkpoints, fsyncs and truncates the WAL): a one-shot CLI call then neither
  // deletes nor re-creates two files, and a read-only workspace stays readable
  if (!opts.readonly) db.fileControl(constants.SQLITE_FCNTL_PERSIST_WAL, 1);
  return {
    exec: (sql) => { db.exec(sql); },
    inTransaction: () => db.inTransaction,
    query: (sql) => db.query(sql) as unknown as SqliteStatement,
    attach(file, schema) {
      db.query(`ATTACH DATABASE ? AS ${schema}`).run(file);
      // else the last connection to close, often this one, deletes the attached file's WAL
      // and index files: a read-only disk could then no longer read it
      if (!opts.readonly) db.fileControl(schema, constants.SQLITE_FCNTL_PERSIST_WAL, 1);
    },
    detach: (schema) => { db.exec(`DETACH DATABASE ${schema}`); },
    close: () => db.close(),
  };
}

/** SQLite result codes we branch on (never on message text). */
export function sqliteErrorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown })?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * A thread that copies a WAL backlog into the database file on request, with its own
 * connection, so a server's writer never copies one on the request thread. A backlog
 * builds up while a long read (another process's dump, a backup) keeps the WAL from
 * being copied past its snapshot; the first checkpoint after it would otherwise copy
 * all of it at once (docs/decisions.md).
 */
export interface BacklogCheckpointer {
  /** starts copying (PASSIVE passes) until fewer than `leaveFrames` frames are left */
  catchUp(): void;
  /** true while a catch-up runs */
  busy(): boolean;
  /** false once the thread could not open the database or was stopped */
  alive(): boolean;
  /** passes run and frames copied so far (tests, diagnostics) */
  stats(): { passes: number; frames: number };
  /** stops the thread after its current pass (waits up to 2 s) */
  stop(): void;
}

// Control block: [0] stop requested, [1] stopped, [2] catch-up wanted / running,
// [3] passes run, [4] frames copied.
const BACKLOG_SOURCE = `
import { Database } from "bun:sqlite";
self.onmessage = (e) => {
  const { path, leaveFrames, control } = e.data;
  const c = new Int32Array(control);
  const done = () => { Atomics.store(c, 1, 1); Atomics.notify(c, 1); Atomics.store(c, 2, 0); Atomics.notify(c, 2); };
  let db;
  try {
    db = new Database(path, { readwrite: true, create: false });
    db.exec("PRAGMA busy_timeout = 0");
  } catch {
    done(); return;
  }
  for (;;) {
    Atomics.wait(c, 2, 0); // asleep until asked
    let copied = -1;
    while (Atomics.load(c, 0) !== 1) {
      let r = null;
      try { r = db.query("PRAGMA wal_checkpoint(PASSIVE)").get(); } catch {}
      Atomics.add(c, 3, 1);
      if (r && r.checkpointed > copied) { Atomics.add(c, 4, r.checkpointed - Math.max(copied, 0)); }
      if (r && r.log >= 0 && r.log - r.checkpointed < leaveFrames) break; // caught up: the writer's own checkpoints take over
      // no progress: a reader still holds the rest back, or the writer's checkpoint runs
      if (!r || r.checkpointed <= copied) Atomics.wait(c, 0, 0, 20);
      copied = r ? r.checkpointed : copied;
    }
    if (Atomics.load(c, 0) === 1) break;
    Atomics.store(c, 2, 0);
    Atomics.notify(c, 2);
  }
  try { db.close(); } catch {}
  done();
};`;

export function startBacklogCheckpointer(path: string, o: { leaveFrames: number }): BacklogCheckpointer {
  const control = new SharedArrayBuffer(20);
  const c = new Int32Array(control);
  const url = URL.createObjectURL(new Blob([BACKLOG_SOURCE], { type: "application/javascript" }));
  const worker = new Worker(url);
  (worker as unknown as { unref(): void }).unref();
  worker.postMessage({ path, leaveFrames: o.leaveFrames, control });
  let stopped = false;
  return {
    catchUp() {
      if (Atomics.load(c, 1) === 1) return;
      Atomics.store(c, 2, 1);
      Atomics.notify(c, 2);
    },
    busy: () => Atomics.load(c, 2) === 1,
    alive: () => !stopped && Atomics.load(c, 1) === 0,
    stats: () => ({ passes: Atomics.load(c, 3), frames: Atomics.load(c, 4) }),
    stop() {
      if (stopped) return;
      stopped = true;
      Atomics.store(c, 0, 1);
      Atomics.notify(c, 0);
      Atomics.store(c, 2, 1); // wake it if asleep
      Atomics.notify(c, 2);
      Atomics.wait(c, 1, 0, 2000);
      worker.terminate();
      URL.revokeObjectURL(url);
    },
  };
}
