/**
 * The full-text index lives in a file of its own (`.cards/search.db`) and follows the
 * event log: a catch-up reads the events committed since it last ran and re-indexes the
 * cards they touched (docs/decisions.md, "search index"). No write pays for full-text
 * indexing, and FTS5's segment merges (5-20 ms of CPU now and then) run under the index
 * file's own lock, on a server's worker thread, never under the database's write lock.
 *
 * The index is derived data: it is rebuilt from the cards whenever it cannot be trusted
 * to follow this database (another database file put in place, a restore, a schema
 * change of its own). A search first brings it up to the newest event (`catchUp`).
 *
 * Rows: the FTS5 rowid is the card's `seq`; `docs` records which card each rowid was
 * indexed for, and every search checks it against the card, so a seq that SQLite reuses
 * after a delete never makes a search answer the wrong card.
 */
import { fileSize, openSqlite, sqliteErrorCode, type SqliteDb } from "../../platform/sqlite.ts";
import { byCodePoint } from "../../domain/card.ts";
import type { SearchConfig } from "../port.ts";
import { searchText } from "../../domain/search-text.ts";
import { checkVerdicts, searchBody } from "./rows.ts";
import { unshareable } from "./connection.ts";
import { SEARCH_EPOCH_KEY, SEARCH_WAL_SIZE_LIMIT } from "./search-names.ts";

/**
 * Bump to rebuild every index file (its tables are dropped and made anew). 2: symbols
 * (emoji) are words. 3: text is indexed in NFC (rows.ts searchText), so a title stored
 * decomposed is found by a composed query. 4: marks are part of words (a vowel sign split
 * "हिन्दी", and "हो" found it), and each character of Chinese, Japanese or Thai is a word.
 * 5: emoji variation selectors, Arabic and Hebrew vowel points and Greek accents are
 * dropped (domain/search-text.ts). 6: what separates words is decided by search-text.ts
 * (skin tones, bidi isolates), and a mark shared with Latin stays with its letter.
 * 7: Russian ё is read as е.
 */
export const SEARCH_SCHEMA_VERSION = 7;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS docs (seq INTEGER PRIMARY KEY, card_id TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS docs_by_card ON docs(card_id);
  CREATE VIRTUAL TABLE IF NOT EXISTS cards_fts USING fts5(
    title, body, content='', contentless_delete=1, tokenize="unicode61 remove_diacritics 2 categories 'L* N* Co So M*'"
  );`;

/** Event types that never change a card's title or fields: nothing to re-index. */
const TEXT_NEUTRAL = new Set(["owner_changed", "status_changed", "tags_changed", "link_added", "link_removed", "comment_added", "comment_edited"]);

/** Events read per statement while catching up. */
const EVENT_CHUNK = 2000;

/** How long opening the index keeps retrying while another process creates it. */
const OPEN_DEADLINE_MS = 5000;

/**
 * Opens (creating, or rebuilding when its schema version differs) the index file. A file
 * that is not a database (or is corrupt) is derived data: it is deleted and made anew.
 */
export function openSearchDb(path: string, busyMs = 5000): SqliteDb {
  // the monotonic clock: a wall clock stepped forward gave up at once
  const deadline = performance.now() + OPEN_DEADLINE_MS;
  for (let fresh = false; ;) {
    let db: SqliteDb | undefined;
    try {
      db = openSqlite(path);
      db.exec(`PRAGMA busy_timeout = ${busyMs}; PRAGMA synchronous = NORMAL; PRAGMA journal_size_limit = ${SEARCH_WAL_SIZE_LIMIT}`);
      const version = Number(db.query("PRAGMA user_version").get()?.user_version ?? 0);
      if (version !== SEARCH_SCHEMA_VERSION) {
        // switching to WAL needs the file to itself: SQLite answers BUSY there without waiting
        if (version === 0) db.exec("PRAGMA journal_mode = WAL");
        db.exec("BEGIN IMMEDIATE");
        try {
          if (Number(db.query("PRAGMA user_version").get()?.user_version ?? 0) !== SEARCH_SCHEMA_VERSION) {
            db.exec("DROP TABLE IF EXISTS cards_fts; DROP TABLE IF EXISTS docs; DROP TABLE IF EXISTS state;");
            db.exec(SCHEMA);
            db.exec(`PRAGMA user_version = ${SEARCH_SCHEMA_VERSION}`);
          }
          db.exec("COMMIT");
        } catch (e) {
          if (db.inTransaction()) db.exec("ROLLBACK");
          throw e;
        }
      }
      return db;
    } catch (e) {
      try { db?.close(); } catch { /* closing a half-open handle */ }
      const code = sqliteErrorCode(e);
      if (code === "SQLITE_BUSY" && performance.now() < deadline) {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2 + Math.random() * 8);
        continue;
      }
      if ((code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") && !fresh) {
        removeFiles(path);
        fresh = true;
        continue;
      }
      throw e;
    }
  }
}

/**
 * What `cards check` finds damaged in the index file (none when it does not exist yet):
 * each line says the remedy, since the index is made again from the cards.
 */
export function indexDamage(path: string): string[] {
  if (fileSize(path) === undefined) return [];
  const say = (m: string): string => `the full-text index ${path}: ${m} (cards and events are not affected: delete it with its -wal and -shm files while no process uses the workspace, and the next search makes it again)`;
  let db: SqliteDb | undefined;
  try {
    // on a read-only disk with no WAL index file beside it, as the database is read (connection.ts)
    db = openSqlite(path, { readonly: true, immutable: unshareable(path) });
    const verdicts = checkVerdicts(db.query("PRAGMA quick_check(5)").all() as Record<string, unknown>[]);
    return verdicts.length === 1 && verdicts[0] === "ok" ? [] : verdicts.map(say);
  } catch (e) {
    // not openable here (a read-only disk, a WAL with commits and no WAL index beside it)
    // is not damage: a search says what it cannot open
    if (sqliteErrorCode(e) === "SQLITE_CANTOPEN") return [];
    return [say((e as Error).message)];
  } finally {
    try { db?.close(); } catch { /* closing */ }
  }
}

/** Deletes the index file and its WAL and index files (derived data). */
function removeFiles(path: string): void {
  const fs = process.getBuiltinModule("node:fs") as typeof import("node:fs");
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(path + suffix, { force: true });
}

/** The search config as one comparable string. */
export function searchConfigKey(search: SearchConfig): string {
  return JSON.stringify([...search.entries()].sort(([a], [b]) => byCodePoint(a, b)).map(([k, v]) => [k, v ?? null]));
}

/** What identifies an event beyond its seq (a different database has other events there). */
const markOf = (e: Record<string, unknown>): string => `${e.seq as number}|${e.at as string}|${e.type as string}|${(e.card_id as string | null) ?? ""}`;

/** The index's own record of what it follows (applied, mark, epoch, config). */
function readState(search: SqliteDb): Map<string, string> {
  const state = new Map<string, string>();
  for (const r of search.query("SELECT key, value FROM state").all()) state.set(r.key as string, r.value as string);
  return state;
}

const headEvent = (main: SqliteDb) => main.query("SELECT seq, at, type, card_id FROM events ORDER BY seq DESC LIMIT 1").get();
const epochOf = (main: SqliteDb) => (main.query("SELECT value FROM meta WHERE key = ?").get(SEARCH_EPOCH_KEY)?.value as string | undefined) ?? "";

/** The newest event's seq (0: none). */
export function headSeq(main: SqliteDb): number {
  return Number(main.query("SELECT max(seq) AS s FROM events").get()?.s ?? 0);
}

/** True when the index follows `main` up to its newest event `head`, with this config. */
function isCurrent(main: SqliteDb, state: Map<string, string>, head: Record<string, unknown> | null, configKey: string): boolean {
  return state.has("applied") && state.get("mark") === (head ? markOf(head) : "") && state.get("epoch") === epochOf(main) && state.get("config") === configKey;
}

/**
 * Brings the index up to the newest event of `main` and returns that event's seq. When
 * the index is already current it writes nothing; else it catches up under the index
 * file's write lock. `main` is only read, one short statement at a time (no long read
 * transaction there holds back its checkpoints): events are append-only, so the newest
 * event read first bounds what this pass covers, and a card changed after it is indexed
 * again by the next pass.
 */
export function syncIndex(main: SqliteDb, search: SqliteDb, config: SearchConfig): number {
  const configKey = searchConfigKey(config);
  const head = headEvent(main);
  if (isCurrent(main, readState(search), head, configKey)) return head ? (head.seq as number) : 0;
  search.exec("BEGIN IMMEDIATE");
  try {
    const applied = catchUpInside(main, search, config, configKey);
    search.exec("COMMIT");
    return applied;
  } catch (e) {
    if (search.inTransaction()) search.exec("ROLLBACK");
    throw e;
  }
}

/** Catches up inside the index's write transaction; returns the seq of the event it covers. */
function catchUpInside(main: SqliteDb, search: SqliteDb, config: SearchConfig, configKey: string): number {
  const state = readState(search);
  const head = headEvent(main);
  const headSeqNow = head ? (head.seq as number) : 0;
  if (isCurrent(main, state, head, configKey)) return headSeqNow; // another process got here first
  const epoch = epochOf(main);
  const applied = Number(state.get("applied") ?? 0);

  let trusted = state.has("applied") && state.get("epoch") === epoch && applied <= headSeqNow;
  if (trusted && applied > 0) {
    const at = main.query("SELECT seq, at, type, card_id FROM events WHERE seq = ?").get(applied);
    trusted = at !== null && markOf(at) === state.get("mark");
  }
  const index = new CardIndexer(main, search, config);
  if (!trusted) {
    search.exec("DELETE FROM docs; INSERT INTO cards_fts (cards_fts) VALUES ('delete-all');");
    const page = main.query("SELECT seq, id, type_id, title, fields FROM cards WHERE seq > ? ORDER BY seq LIMIT ?");
    for (let from = 0; ;) {
      const rows = page.all(from, EVENT_CHUNK);
      for (let i = 0; i < rows.length; i++) index.insert(rows[i]!);
      if (rows.length < EVENT_CHUNK) break;
      from = rows[rows.length - 1]!.seq as number;
    }
  } else {
    const before = state.get("config");
    if (before !== configKey) reindexChangedTypes(main, index, before, config);
    if (applied < headSeqNow) {
      const touched = new Set<string>();
      const read = main.query("SELECT seq, type, card_id FROM events WHERE seq > ? AND seq <= ? AND card_id IS NOT NULL ORDER BY seq LIMIT ?");
      for (let from = applied; ;) {
        const rows = read.all(from, headSeqNow, EVENT_CHUNK);
        for (let i = 0; i < rows.length; i++) if (!TEXT_NEUTRAL.has(rows[i]!.type as string)) touched.add(rows[i]!.card_id as string);
        if (rows.length < EVENT_CHUNK) break;
        from = rows[rows.length - 1]!.seq as number;
      }
      for (const id of touched) index.reindex(id);
    }
  }
  const put = search.query("INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  put.run("applied", String(headSeqNow));
  put.run("mark", head ? markOf(head) : "");
  put.run("epoch", epoch);
  put.run("config", configKey);
  return headSeqNow;
}

/** Re-indexes the cards of the types whose searchable fields differ from `before`. */
function reindexChangedTypes(main: SqliteDb, index: CardIndexer, before: string | undefined, config: SearchConfig): void {
  let old: Map<string, unknown>;
  try {
    old = new Map<string, unknown>(before ? (JSON.parse(before) as Array<[string, unknown]>) : []);
  } catch {
    old = new Map();
  }
  const types = new Set<string>();
  for (const [k, v] of config) if (!old.has(k) || JSON.stringify(old.get(k)) !== JSON.stringify(v ?? null)) types.add(k);
  for (const k of old.keys()) if (!config.has(k)) types.add(k);
  // pages of ids, each read in a statement of its own (no read transaction held meanwhile)
  const ids = main.query("SELECT id FROM cards WHERE type_id = ? AND id > ? ORDER BY id LIMIT ?");
  for (const t of types) {
    for (let after = ""; ;) {
      const rows = ids.all(t, after, EVENT_CHUNK);
      for (let i = 0; i < rows.length; i++) index.reindex(rows[i]!.id as string);
      if (rows.length < EVENT_CHUNK) break;
      after = rows[rows.length - 1]!.id as string;
    }
  }
}

/** Writes one card's document: the rowid is its seq, recorded in `docs` with its id. */
class CardIndexer {
  constructor(private readonly main: SqliteDb, private readonly search: SqliteDb, private readonly config: SearchConfig) {}

  /** Drops the card's document, and writes it anew when the card still exists. */
  reindex(id: string): void {
    const old = this.search.query("SELECT seq FROM docs WHERE card_id = ?").get(id);
    if (old) this.drop(old.seq as number);
    const c = this.main.query("SELECT seq, id, type_id, title, fields FROM cards WHERE id = ?").get(id);
    if (!c) return;
    // a seq SQLite reused after a delete: the deleted card's document goes first
    if (this.search.query("SELECT 1 FROM docs WHERE seq = ?").get(c.seq as number)) this.drop(c.seq as number);
    this.insert(c);
  }

  insert(c: Record<string, unknown>): void {
    let fields: Record<string, unknown>;
    try {
      fields = JSON.parse(c.fields as string) as Record<string, unknown>;
    } catch {
      fields = {};
    }
    const body = searchBody(fields, this.config.get(c.type_id as string));
    this.search.query("INSERT INTO cards_fts (rowid, title, body) VALUES (?, ?, ?)").run(c.seq as number, searchText(c.title as string), body);
    this.search.query("INSERT INTO docs (seq, card_id) VALUES (?, ?)").run(c.seq as number, c.id as string);
  }

  private drop(seq: number): void {
    this.search.query("DELETE FROM cards_fts WHERE rowid = ?").run(seq);
    this.search.query("DELETE FROM docs WHERE seq = ?").run(seq);
  }
}
