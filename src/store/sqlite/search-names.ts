/**
 * The search index's names that every call needs (search-index.ts itself loads only when
 * a search or a server needs it: a one-shot call that does not search never evaluates it).
 */

import { CardsError } from "../../domain/errors.ts";

/** The name under which a connection of the main database attaches the index. */
export const SEARCH_SCHEMA_NAME = "s";

/**
 * Every connection to the index, attached ones included, caps its WAL: with a limit set,
 * the last connection to close truncates the WAL it checkpointed to 0 bytes. Without one
 * the kept WAL (PERSIST_WAL) still held its frames, valid: the next process recovered
 * them and its close copied them all again (a 54 MB WAL after a 100,000-card build made
 * every one-shot search 86 ms).
 */
export const SEARCH_WAL_SIZE_LIMIT = 8 * 1024 * 1024;

/** Main-database meta key: changed when cards arrive without their events (a restore). */
export const SEARCH_EPOCH_KEY = "search_epoch";

/** The index file next to the database file. */
export function searchPath(dbPath: string): string {
  const slash = dbPath.lastIndexOf("/");
  return `${slash >= 0 ? dbPath.slice(0, slash + 1) : ""}search.db`;
}

/**
 * The full-text index found damaged. It is derived from the cards, so the remedy is to let
 * it be rebuilt, not to restore a backup (the cards and events are in the other file).
 */
export function searchIndexDamaged(detail: string, file = ".cards/search.db"): CardsError {
  return new CardsError("unavailable", `the full-text index ${file} is damaged (${detail}); cards and events are not affected`, {
    hint: `the index is made again from the cards: stop the processes using the workspace, delete ${file} with its -wal and -shm files, and search again`,
  });
}
