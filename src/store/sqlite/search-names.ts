/**
 * The search index's names that every call needs (search-index.ts itself loads only when
 * a search or a server needs it: a one-shot call that does not search never evaluates it).
 */

/** The name under which a connection of the main database attaches the index. */
export const SEARCH_SCHEMA_NAME = "s";

/** Main-database meta key: changed when cards arrive without their events (a restore). */
export const SEARCH_EPOCH_KEY = "search_epoch";

/** The index file next to the database file. */
export function searchPath(dbPath: string): string {
  const slash = dbPath.lastIndexOf("/");
  return `${slash >= 0 ? dbPath.slice(0, slash + 1) : ""}search.db`;
}
