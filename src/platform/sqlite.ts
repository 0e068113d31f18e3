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
  /** checkpoints completed and pages copied so far (for tests and diagnostics) */
  stats(): { runs: number; pages: number };
  /** stops the thread after its current checkpoint and closes its connection (waits up to 2 s) */
  stop(): void;
}

// The worker's source: a blob URL needs no extra entry point in the compiled binary.
// Control block (Int32Array over a SharedArrayBuffer): [0] stop requested, [1] stopped,
// [2] checkpoints run, [3] pages copied.
const CHECKPOINTER_SOURCE = `
import { Database } from "bun:sqlite";
self.onmessage = (e) => {
  const { path, intervalMs, restartPages, control } = e.data;
  const c = new Int32Array(control);
  let db;
  try {
    db = new Database(path, { readwrite: true, create: false });
    db.exec("PRAGMA busy_timeout = 0");
  } catch {
    Atomics.store(c, 1, 1); Atomics.notify(c, 1); return;
  }
  const tick = () => {
    if (Atomics.load(c, 0) === 1) {
      try { db.close(); } catch {}
      Atomics.store(c, 1, 1); Atomics.notify(c, 1);
      return;
    }
    try {
      let r = db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
      // A RESTART that meets a writer or a reader gives up at once (the next tick tries
      // again) instead of holding writers off while it waits. Under load that never lets
      // go, the WAL would grow without end: past four times the threshold it waits up to
      // 50 ms, which bounds both the WAL and the stall.
      if (r && r.log > restartPages) {
        const wait = r.log > restartPages * 4 ? 50 : 0;
        if (wait) db.exec("PRAGMA busy_timeout = " + wait);
        try { r = db.query("PRAGMA wal_checkpoint(RESTART)").get(); } finally { if (wait) db.exec("PRAGMA busy_timeout = 0"); }
      }
      if (r && r.checkpointed > 0) { Atomics.add(c, 2, 1); Atomics.add(c, 3, r.checkpointed); }
    } catch {}
    setTimeout(tick, intervalMs);
  };
  tick();
};`;

/**
 * Starts checkpointing `path`'s WAL every `intervalMs` on a worker thread (PASSIVE: never
 * blocks writers or readers; then RESTART, without waiting, when the WAL holds more than
 * `restartPages`: when no transaction is running it copies only what was written since
 * the PASSIVE pass and rewinds the WAL, holding writers off for about that long; else it
 * gives up until the next tick, and past four times `restartPages` it waits up to 50 ms.
 * Always waiting up to 200 ms there gave writes stalls of 10-230 ms). The writer connection then runs with wal_autocheckpoint off, so
 * no request ever waits for a checkpoint (perf-baselines.md §4: the write tail is the
 * checkpoint).
 */
export function startCheckpointer(path: string, o: { intervalMs: number; restartPages: number }): Checkpointer {
  const control = new SharedArrayBuffer(16);
  const c = new Int32Array(control);
  const url = URL.createObjectURL(new Blob([CHECKPOINTER_SOURCE], { type: "application/javascript" }));
  const worker = new Worker(url);
  (worker as unknown as { unref(): void }).unref();
  worker.postMessage({ path, intervalMs: o.intervalMs, restartPages: o.restartPages, control });
  let stopped = false;
  return {
    stats: () => ({ runs: Atomics.load(c, 2), pages: Atomics.load(c, 3) }),
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
