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
  /** opened `immutable` (OpenSqliteOptions): what it attaches is read the same way */
  readonly immutable: boolean;
  detach(schema: string): void;
  close(): void;
}

export interface OpenSqliteOptions {
  readonly?: boolean;
  create?: boolean;
  /** keep the WAL files at the last close (default true; false for a file handed to someone else) */
  persistWal?: boolean;
  /**
   * read-only, promising SQLite nothing changes the file (its `immutable` URI flag): no
   * locks, no WAL index. For a file on a read-only disk that has no `-shm` beside it,
   * which SQLite can neither create nor do without otherwise.
   */
  immutable?: boolean;
}

const immutableUri = (path: string): string => `file:${path.replace(/[%?#]/g, encodeURIComponent)}?immutable=1`;

/** Opens a database file; throws the driver's error (with `code`) when it cannot. */
export function openSqlite(path: string, opts: OpenSqliteOptions = {}): SqliteDb {
  const db = opts.immutable
    ? new Database(immutableUri(path), constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI)
    : opts.readonly
    ? new Database(path, { readonly: true, strict: true })
    : new Database(path, { create: opts.create ?? true, readwrite: true, strict: true });
  // keep the WAL and its index file when the last connection closes (emptied: the close
  // still checkpoints, fsyncs and truncates the WAL): a one-shot CLI call then neither
  // deletes nor re-creates two files, and a read-only workspace stays readable
  if (!opts.readonly && !opts.immutable && opts.persistWal !== false) db.fileControl(constants.SQLITE_FCNTL_PERSIST_WAL, 1);
  return {
    immutable: opts.immutable === true,
    exec: (sql) => { db.exec(sql); },
    inTransaction: () => db.inTransaction,
    query: (sql) => db.query(sql) as unknown as SqliteStatement,
    attach(file, schema) {
      db.query(`ATTACH DATABASE ? AS ${schema}`).run(opts.immutable ? immutableUri(file) : file);
      // else the last connection to close, often this one, deletes the attached file's WAL
      // and index files: a read-only disk could then no longer read it
      if (!opts.readonly && !opts.immutable) db.fileControl(schema, constants.SQLITE_FCNTL_PERSIST_WAL, 1);
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

/** File sizes for the driver (files.ts): whether a database file is there and holds anything. */
export { fileSize, freeBytes } from "./files.ts";
