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

/** A background WAL checkpointer: its own connection on a worker thread. */
export interface Checkpointer {
  /**
   * Called by the writer before each transaction: a promise when the checkpointer wants
   * the writer to hold still while it rewinds the WAL (resolves when done, at most
   * PAUSE_MAX_MS later), else undefined.
   */
  writerPause(): Promise<unknown> | undefined;
  /** checkpoints completed and pages copied so far (for tests and diagnostics) */
  stats(): { runs: number; pages: number; rewinds: number };
  /** stops the thread after its current checkpoint and closes its connection (waits up to 2 s) */
  stop(): void;
}

/** How long a writer holds still at most for a rewind, should the thread not answer. */
const PAUSE_MAX_MS = 200;

// The worker's source: a blob URL needs no extra entry point in the compiled binary.
// Control block (Int32Array over a SharedArrayBuffer): [0] stop requested, [1] stopped,
// [2] checkpoints run, [3] pages copied, [4] rewind wanted, [5] writer holding still,
// [6] rewinds done, [7] a writer calls writerPause.
const CHECKPOINTER_SOURCE = `
import { Database } from "bun:sqlite";
self.onmessage = (e) => {
  const { path, intervalMs, restartPages, convergeFrames, pauseWaitMs, control } = e.data;
  const c = new Int32Array(control);
  let db;
  try {
    db = new Database(path, { readwrite: true, create: false });
    db.exec("PRAGMA busy_timeout = 0");
  } catch {
    Atomics.store(c, 1, 1); Atomics.notify(c, 1); return;
  }
  const passive = () => db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
  // after a rewind, the WAL keeps its old length until the next write starts it over:
  // nothing to do until then. After a RESTART that met a reader, wait a while.
  let rewound = -1;
  let backoffUntil = 0;
  const rewind = (r) => {
    // Copy what was written during the last pass, again, until little is left: the
    // writer then holds still only for that remainder and two fsyncs.
    for (let i = 0; i < 4; i++) {
      const before = r.log;
      r = passive();
      if (!r || r.log - before < convergeFrames) break;
    }
    Atomics.store(c, 5, 0);
    Atomics.store(c, 4, 1);
    // an idle writer never reaches a transaction boundary: then nobody needs to hold still;
    // nor is there anyone to ask when no writer in this process ever called writerPause
    const still = Atomics.load(c, 7) === 1 && (Atomics.wait(c, 5, 0, pauseWaitMs) !== "timed-out" || Atomics.load(c, 5) === 1);
    try {
      // RESTART waits for readers (other processes' too) to leave the old WAL. A writer
      // that was not asked (another process) is raced for its lock: given up at once,
      // unless the WAL is four times over, then waited for up to 50 ms, which bounds it.
      db.exec("PRAGMA busy_timeout = " + (still ? 20 : r.log > restartPages * 4 ? 50 : 0));
      r = db.query("PRAGMA wal_checkpoint(RESTART)").get();
      if (r && r.busy === 0) { Atomics.add(c, 6, 1); rewound = r.log; }
      else if (still) backoffUntil = Date.now() + 1000; // the writer held still, a reader (another process) did not
    } finally {
      db.exec("PRAGMA busy_timeout = 0");
      Atomics.store(c, 4, 0); Atomics.store(c, 5, 0); Atomics.notify(c, 4);
    }
    return r;
  };
  const tick = () => {
    if (Atomics.load(c, 0) === 1) {
      try { db.close(); } catch {}
      Atomics.store(c, 1, 1); Atomics.notify(c, 1);
      return;
    }
    try {
      let r = passive();
      if (r && r.log > restartPages && r.log !== rewound && Date.now() >= backoffUntil) r = rewind(r);
      if (r && r.checkpointed > 0) { Atomics.add(c, 2, 1); Atomics.add(c, 3, r.checkpointed); }
    } catch {}
    setTimeout(tick, intervalMs);
  };
  tick();
};`;

export interface CheckpointerOptions {
  /** how often a PASSIVE pass runs */
  intervalMs: number;
  /** past this many WAL frames the WAL is rewound */
  restartPages: number;
  /** before a rewind, PASSIVE passes repeat while each found at least this many new frames (up to 4) */
  convergeFrames?: number;
  /** how long the thread waits for the writer to reach a transaction boundary */
  pauseWaitMs?: number;
}

/**
 * Checkpoints `path`'s WAL on a worker thread, so no request waits for a checkpoint
 * (perf-baselines.md §4: the write tail is the checkpoint); the writer connection runs
 * with wal_autocheckpoint off.
 *
 * A PASSIVE pass every `intervalMs` copies the WAL into the database without blocking
 * anyone. Under steady writes that never lets the WAL be reused, so past `restartPages`
 * frames the thread rewinds it: it repeats PASSIVE passes until little was written
 * during the last one, asks the writer to hold still at its next transaction boundary
 * (`writerPause`), and runs a RESTART, which copies that remainder, fsyncs and lets the
 * next write start the WAL over. The writer waits only for that: a RESTART that raced
 * the writer for its lock instead either gave up under load (the WAL grew) or held it
 * for the whole copy (stalls of 20-60 ms, docs/decisions.md).
 */
export function startCheckpointer(path: string, o: CheckpointerOptions): Checkpointer {
  const control = new SharedArrayBuffer(32);
  const c = new Int32Array(control);
  const url = URL.createObjectURL(new Blob([CHECKPOINTER_SOURCE], { type: "application/javascript" }));
  const worker = new Worker(url);
  (worker as unknown as { unref(): void }).unref();
  worker.postMessage({ path, intervalMs: o.intervalMs, restartPages: o.restartPages, convergeFrames: o.convergeFrames ?? 300, pauseWaitMs: o.pauseWaitMs ?? 20, control });
  let stopped = false;
  let cooperating = false;
  return {
    writerPause() {
      if (!cooperating) { cooperating = true; Atomics.store(c, 7, 1); }
      if (Atomics.load(c, 4) !== 1 || Atomics.load(c, 1) === 1) return undefined; // no rewind wanted, or the thread is gone
      Atomics.store(c, 5, 1);
      Atomics.notify(c, 5);
      const w = Atomics.waitAsync(c, 4, 1, PAUSE_MAX_MS);
      return w.async ? w.value : undefined; // the rewind ended in between
    },
    stats: () => ({ runs: Atomics.load(c, 2), pages: Atomics.load(c, 3), rewinds: Atomics.load(c, 6) }),
    stop() {
      if (stopped) return;
      stopped = true;
      Atomics.store(c, 0, 1);
      // the worker notices at its next tick (at most intervalMs + one checkpoint away)
      Atomics.wait(c, 1, 0, 2000);
      worker.terminate();
      URL.revokeObjectURL(url);
    },
  };
}
