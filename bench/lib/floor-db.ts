/**
 * The floor database: the least SQL a card store must run (after ../shared/bench/lib/store.ts).
 * A cards table with 2 indexes and an events log; insert = card + card_created event in one
 * BEGIN IMMEDIATE transaction; claim = guarded UPDATE of the oldest unowned card + an
 * owner_changed event. No validation, FTS, idempotency or extra indexes: those are what the
 * product adds on top, and what the ratios to these floors measure.
 */
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { rng, title, body } from "./corpus.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS cards(
  id TEXT PRIMARY KEY, type_id TEXT NOT NULL, title TEXT NOT NULL, status TEXT NOT NULL,
  owner TEXT, tags TEXT NOT NULL DEFAULT '[]', fields TEXT NOT NULL DEFAULT '{}',
  version INTEGER NOT NULL DEFAULT 1, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  status_since TEXT NOT NULL, created_by TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events(
  id INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL, actor TEXT NOT NULL, at TEXT NOT NULL,
  card_id TEXT, diff TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_card ON events(card_id, id);
CREATE INDEX IF NOT EXISTS cards_unowned ON cards(updated_at, id) WHERE owner IS NULL;
`;

export type Db = Database;
export interface FloorCard { id: string; title: string; status: string; owner: string | null; version: number; [k: string]: unknown }

export function openFloor(path: string, busyMs = 10_000): Database {
  const db = new Database(path, { create: true });
  // busy_timeout before journal_mode (perf-baselines.md trap 3)
  db.exec(`PRAGMA busy_timeout=${busyMs}; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;`);
  return db;
}

/** A fresh floor database at `path` with `n` cards (pool: all unowned "todo", oldest first). */
export function createFloor(path: string, n: number, o: { pool?: boolean; seed?: number } = {}): void {
  for (const s of ["", "-wal", "-shm"]) rmSync(path + s, { force: true });
  const db = openFloor(path);
  db.exec(SCHEMA);
  const r = rng(o.seed ?? 3);
  const ins = db.prepare("INSERT INTO cards(id,type_id,title,status,owner,tags,fields,created_at,updated_at,status_since,created_by) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  const base = Date.now() - n * 1000;
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const at = new Date(base + i * 1000).toISOString();
      const status = o.pool ? "todo" : r.pick(["backlog", "todo", "doing", "done", "done"]);
      ins.run(`card_${i.toString(16).padStart(16, "0")}`, "task", title(r), status, null, "[]",
        JSON.stringify({ priority: "normal", description: body(r) }), at, at, at, "ada");
    }
  })();
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}

/** insert card + card_created event in one IMMEDIATE transaction; returns the card row */
export function makeInsert(db: Database): (b: { type_id: string; title: string; fields?: unknown }, actor: string) => FloorCard {
  const ins = db.prepare(`INSERT INTO cards(id,type_id,title,status,fields,created_at,updated_at,status_since,created_by)
    VALUES (?1,?2,?3,'backlog',?4,?5,?5,?5,?6) RETURNING *`);
  const ev = db.prepare("INSERT INTO events(type,actor,at,card_id,diff) VALUES ('card_created',?1,?2,?3,?4)");
  const tx = db.transaction((b: { type_id: string; title: string; fields?: unknown }, actor: string) => {
    const at = new Date().toISOString();
    const id = "card_" + crypto.randomUUID().replaceAll("-", "").slice(0, 16);
    const c = ins.get(id, String(b.type_id), String(b.title), JSON.stringify(b.fields ?? {}), at, actor) as FloorCard;
    ev.run(actor, at, id, JSON.stringify({ card: c }));
    return c;
  });
  return (b, actor) => tx.immediate(b, actor);
}

/**
 * The claim transaction. spin: take the write lock with 1-2 ms jittered retries
 * (busy_timeout=0 around BEGIN IMMEDIATE, set with exec: a prepared pragma does nothing).
 */
export function makeClaim(db: Database, spin = false): (actor: string) => FloorCard | null {
  const upd = db.prepare(`UPDATE cards SET owner=?1, version=version+1, updated_at=?2
    WHERE id=(SELECT id FROM cards WHERE owner IS NULL ORDER BY updated_at, id LIMIT 1) AND owner IS NULL
    RETURNING id, title, status, owner, version, updated_at`);
  const ev = db.prepare("INSERT INTO events(type,actor,at,card_id,diff) VALUES ('owner_changed',?1,?2,?3,?4)");
  const begin = () => {
    if (!spin) return db.exec("BEGIN IMMEDIATE");
    db.exec("PRAGMA busy_timeout=0");
    try {
      const deadline = Date.now() + 10_000;
      for (;;) {
        try { db.exec("BEGIN IMMEDIATE"); return; } catch (e) {
          if ((e as { code?: string }).code !== "SQLITE_BUSY" || Date.now() > deadline) throw e;
          Bun.sleepSync(Math.random() < 0.5 ? 1 : 2);
        }
      }
    } finally { db.exec("PRAGMA busy_timeout=10000"); }
  };
  return (actor) => {
    begin();
    try {
      const at = new Date().toISOString();
      const got = upd.get(actor, at) as FloorCard | null;
      if (got) ev.run(actor, at, got.id, JSON.stringify({ before: null, after: actor }));
      db.exec("COMMIT");
      return got;
    } catch (e) {
      try { db.exec("ROLLBACK"); } catch { /* not in a transaction */ }
      throw e;
    }
  };
}
