/**
 * The only door to bun:sqlite. Store drivers get a small `SqliteDb` and never name Bun.
 * NOTE stack.md §4 and perf-baselines.md traps: busy_timeout is set with exec (a prepared
 * pragma does nothing), and before journal_mode=WAL.
 */
import { Database } from "bun:sqlite";

export type SqlValue = string | number | bigint | null | Uint8Array;

export interface SqliteStatement {
  get(...params: SqlValue[]): Record<string, unknown> | null;
  all(...params: SqlValue[]): Record<string, unknown>[];
  run(...params: SqlValue[]): { changes: number; lastInsertRowid: number | bigint };
  iterate(...params: SqlValue[]): IterableIterator<Record<string, unknown>>;
}

export interface SqliteDb {
  exec(sql: string): void;
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
  return {
    exec: (sql) => { db.exec(sql); },
    query: (sql) => db.query(sql) as unknown as SqliteStatement,
    close: () => db.close(),
  };
}

/** SQLite result codes we branch on (never on message text). */
export function sqliteErrorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown })?.code;
  return typeof code === "string" ? code : undefined;
}
